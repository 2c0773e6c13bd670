/* Which nodes the fold hands to Python (rust_differences.py says why the parsers may read
 * them differently): a quote, an item with a tab among a line's leading marks, a container or
 * paragraph that may hold or head a table go to the window's `check`; a heading or fence with
 * a '|' to its `special`. Each test here is the prefilter; Python makes the call. */

#include "_native.h"

/* Offset of document line `line`'s first char (the text's length past the last line). */
static Py_ssize_t
line_start(Window *w, Py_ssize_t line)
{
    return line < offset_count(&w->doc_starts) ? offset_at(&w->doc_starts, line)
                                               : PyUnicode_GET_LENGTH(w->text);
}

/* Whether text[a:b] holds a '|' (-1 with an error set). */
static int
pipe_in(Window *w, Py_ssize_t a, Py_ssize_t b)
{
    Py_ssize_t pipe = PyUnicode_FindChar(w->text, '|', a, b, 1);
    return pipe == -2 ? -1 : pipe >= 0;
}

/* Whether document line `line` holds a '|' (-1 with an error set). */
static int
line_has_pipe(Window *w, Py_ssize_t line)
{
    return pipe_in(w, line_start(w, line), line_start(w, line + 1));
}

/* Whether a document line in [first, stop) has a tab among its indentation, quote marks and
 * list markers (rust_differences.TAB_INDENT). */
static int
indented_by_tab(Window *w, Py_ssize_t first, Py_ssize_t stop)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(w->text);
    int kind = PyUnicode_KIND(w->text);
    const void *data = PyUnicode_DATA(w->text);
    for (Py_ssize_t line = first; line < stop; line++) {
        for (Py_ssize_t i = line_start(w, line); i < length; i++) {
            Py_UCS4 ch = PyUnicode_READ(kind, data, i);
            if (ch == '\t') {
                return 1;
            }
            if (ch != ' ' && ch != '>' && !(ch < 128 && strchr("*+-.)0123456789", (int)ch))) {
                break;
            }
        }
    }
    return 0;
}

/* The first char of document line `line` past spaces, tabs and quote marks ('\n' for a line
 * holding none, and past the last line). */
static Py_UCS4
first_mark(Window *w, Py_ssize_t line)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(w->text);
    int kind = PyUnicode_KIND(w->text);
    const void *data = PyUnicode_DATA(w->text);
    for (Py_ssize_t i = line_start(w, line); i < length; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch != ' ' && ch != '\t' && ch != '>') {
            return ch == '\r' ? '\n' : ch;
        }
    }
    return '\n';
}

/* The window's `check` (rust_blocks._Folder.check_node) on a node: -1 with Fallback set when
 * it hands the document back. */
static int
call_check(Window *w, PyObject *node, PyObject *kind, Py_ssize_t first, Py_ssize_t stop,
           PyObject *children)
{
    PyObject *none = PyObject_CallFunction(w->check, "OOnnO", node, kind, first, stop,
                                           children);
    Py_XDECREF(none);
    return none == NULL ? -1 : 0;
}

/* The window's `check` for a quote, a list item with a tab
 * among a line's indentation and markers, or a container whose first line holds a '|': -1
 * with Fallback set when markdown-it-py may read it otherwise. */
INTERNAL int
check_container(Window *w, PyObject *node, PyObject *kind, Py_ssize_t first, Py_ssize_t stop,
                PyObject *children)
{
    int checked = PyUnicode_CompareWithASCIIString(kind, "blockquote") == 0;
    if (!checked && PyUnicode_CompareWithASCIIString(kind, "item") == 0) {
        checked = indented_by_tab(w, first, stop);
    }
    if (!checked) {
        checked = line_has_pipe(w, first);
        if (checked <= 0) {
            return checked;
        }
    }
    return call_check(w, node, kind, first, stop, children);
}

/* Whether text[start:end] holds a '|' (-1 with an error set). */
static int
has_pipe(Window *w, PyObject *start, PyObject *end)
{
    return pipe_in(w, PyLong_AsSsize_t(start), PyLong_AsSsize_t(end));
}

/* Where a leaf that is not plain is made: a heading holding no '|' by heading_block, a fence
 * whose opening line holds none by fence_block, any other by the window's `special` (which
 * hands back what markdown-it-py may read as a table); -1 with an error set. */
INTERNAL int
route_leaf(Window *w, PyObject *kind, Py_ssize_t first, PyObject *start, PyObject *end)
{
    if (PyUnicode_Compare(kind, w->heading) == 0) {
        int pipe = has_pipe(w, start, end);
        return pipe < 0 ? -1 : pipe ? SPECIAL : HEADING;
    }
    if (PyUnicode_CompareWithASCIIString(kind, "fence") == 0) {
        int pipe = line_has_pipe(w, first);
        return pipe < 0 ? -1 : pipe ? SPECIAL : FENCE;
    }
    return PyErr_Occurred() ? -1 : SPECIAL;
}

/* The window's `check` for a paragraph whose line after next may be a delimiter row (one
 * cut short for a table, rust_differences.cut_for_a_table): -1 with Fallback set. */
INTERNAL int
check_paragraph(Window *w, PyObject *node, PyObject *kind, Py_ssize_t first, Py_ssize_t stop)
{
    if (kind != w->paragraph && PyUnicode_Compare(kind, w->paragraph) != 0) {
        return PyErr_Occurred() ? -1 : 0;
    }
    Py_UCS4 row = first_mark(w, stop + 1); /* the check's prefilter */
    if ((row != '|' && row != '-' && row != ':') || first_mark(w, stop) == '\n') {
        return 0; /* no delimiter-like row, or a blank line ends the paragraph in both */
    }
    return call_check(w, node, kind, first, stop, empty_tuple);
}
