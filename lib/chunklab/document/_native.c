/* chunklab.document._native: the document stage's work in C where Python costs most.
 *
 * `heading_paths(blocks, heading)`: the heading stack of sections.Breadcrumbs;
 * `block_spans(blocks, itemsize)`: its block starts and ends.
 *
 * `line_ends(text, itemsize)`: the offsets just past each "\n" of a text, as the bytes of an
 * array of 4- or 8-byte ints (lines.line_ends, without a string per line).
 *
 * `gaps(blocks, text)`: the text between blocks that is not whitespace (blocks._gaps).
 *
 * `fold(...)`, the fold of markdown-it-pyrs's node tree into Blocks, does for each node what
 * _Folder.fold in rust_blocks.py does: a node's byte offsets become the document lines they
 * lie on, those lines its chars (trailing whitespace left out), and a container, a plain leaf
 * (paragraph, code, rule, front matter, a tight item's text), a heading holding no '|' (its
 * title read by plain_text unless it is plain already) or a fence whose opening line holds
 * none becomes its Block here, its slots set directly. Every other leaf (a table, HTML block,
 * reference definition, a paragraph read for an inferred heading, or a heading or fence with
 * a '|') is handed to the window's `special` callback, which makes its Block in Python, and
 * a quote, or a container whose first line holds a '|', to its `check` callback, which hands
 * back a document markdown-it-py may read otherwise. tests/test_native.py holds the Blocks to
 * those of the Python fold, and the line ends to those of lines.line_ends. */

#include "../util/_cext.h"

/* The window: what the callers set up in rust_blocks._native_window. */
typedef struct {
    PyObject *text;         /* the document (str) */
    Py_buffer doc_starts;   /* its line starts (array of int32 or int64) */
    Py_buffer win_starts;   /* the window's line starts, in its own unit (bytes or chars) */
    Py_ssize_t base, shift; /* offset of the window in win_starts' unit; its first line */
    PyObject *shared;       /* dict: one int object per offset recently made */
    Py_ssize_t shared_max;
    PyTypeObject *block;    /* the Block class */
    PyObject *containers, *leaves; /* dicts: node name -> Block kind */
    PyObject *plain, *wordless, *always; /* frozensets of kinds */
    PyObject *paragraph, *tight_text, *list_kind;
    PyObject *fallback;     /* the Fallback exception class */
    PyObject *special;      /* callable(node, kind, name, depth, first, stop, start, end, found) */
    PyObject *check;        /* callable(node, kind, first, stop, children): Fallback or None */
    long max_nesting;
    int infer;
    /* headings: plain_text, the window's link definitions (label -> url), the kinds heading and
     * empty_heading, the node name lheading, the provenances markdown_atx and markdown_setext,
     * the inline marks (a title holding none, its words single-spaced, is its own text) */
    PyObject *plain_text, *ref_map, *heading, *empty_heading, *lheading, *atx, *setext;
    unsigned char marks[128]; /* ASCII chars that may start inline syntax (inline.py) */
} Window;

/* Offsets of the Block slots, read from its member descriptors. */
enum { B_KIND, B_START, B_END, B_LEVEL, B_TITLE, B_PROVENANCE, B_RAW_TITLE, B_CONTENT,
       B_CHILDREN, B_FIELDS };
static const char *const block_fields[B_FIELDS] = {
    "kind", "start", "end", "level", "title", "provenance", "raw_title", "content", "children"};
static SlotTable block_slots = {block_fields, B_FIELDS};
static PyObject *zero, *empty_str, *empty_tuple;
static PyObject *s_name, *s_srcmap, *s_children, *s_meta, *s_content, *s_level, *s_strip,
    *s_kind, *s_title, *s_provenance, *s_start, *s_end, *s_info;

static void
set_slot(PyObject *obj, int field, PyObject *value)
{
    set_slot_at(obj, block_slots.offsets[field], value);
}

/* A Block with its defaults but kind, start, end, content and children. */
static PyObject *
make_block(Window *w, PyObject *kind, PyObject *start, PyObject *end, int content,
           PyObject *children)
{
    PyObject *obj = w->block->tp_alloc(w->block, 0);
    if (obj == NULL) {
        return NULL;
    }
    set_slot(obj, B_KIND, kind);
    set_slot(obj, B_START, start);
    set_slot(obj, B_END, end);
    set_slot(obj, B_LEVEL, zero);
    set_slot(obj, B_TITLE, empty_str);
    set_slot(obj, B_PROVENANCE, empty_str);
    set_slot(obj, B_RAW_TITLE, empty_str);
    set_slot(obj, B_CONTENT, content ? Py_True : Py_False);
    set_slot(obj, B_CHILDREN, children ? children : empty_tuple);
    return obj;
}

/* The same int object for an offset made recently (LineIndex.span's `shared`). */
static PyObject *
shared_int(Window *w, Py_ssize_t value)
{
    PyObject *key = PyLong_FromSsize_t(value);
    if (key == NULL) {
        return NULL;
    }
    PyObject *found = PyDict_SetDefault(w->shared, key, key);
    Py_XINCREF(found);
    Py_DECREF(key);
    return found;
}

/* Document lines [first, stop) of a node's srcmap and their chars [start, end). */
static int
place(Window *w, PyObject *node, Py_ssize_t *first, Py_ssize_t *stop, PyObject **start,
      PyObject **end)
{
    PyObject *srcmap = PyObject_GetAttr(node, s_srcmap);
    if (srcmap == NULL) {
        return -1;
    }
    if (!PyTuple_Check(srcmap) || PyTuple_GET_SIZE(srcmap) != 2) {
        PyErr_Format(PyExc_ValueError, "a node without a source map: %R", srcmap);
        Py_DECREF(srcmap);
        return -1;
    }
    Py_ssize_t s = PyLong_AsSsize_t(PyTuple_GET_ITEM(srcmap, 0));
    Py_ssize_t e = PyLong_AsSsize_t(PyTuple_GET_ITEM(srcmap, 1));
    Py_DECREF(srcmap);
    if (PyErr_Occurred()) {
        return -1;
    }
    *first = bisect_right_from(&w->win_starts, w->base + s, 0) - 1 + w->shift;
    *stop = bisect_right_from(&w->win_starts, w->base + (e > s ? e - 1 : s), 0) + w->shift;
    Py_ssize_t n = offset_count(&w->doc_starts);
    Py_ssize_t length = PyUnicode_GET_LENGTH(w->text);
    Py_ssize_t a = *first < n ? offset_at(&w->doc_starts, *first) : length;
    Py_ssize_t b = *stop < n ? offset_at(&w->doc_starts, *stop) : length;
    int kind = PyUnicode_KIND(w->text);
    const void *data = PyUnicode_DATA(w->text);
    while (b > a && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, b - 1))) {
        b--;
    }
    if (PyDict_GET_SIZE(w->shared) > w->shared_max) {
        PyDict_Clear(w->shared);
    }
    *start = shared_int(w, a);
    if (*start == NULL) {
        return -1;
    }
    *end = shared_int(w, b);
    if (*end == NULL) {
        Py_CLEAR(*start);
        return -1;
    }
    return 0;
}

/* Whether text[start:end] holds a char str.isalnum holds true for (blocks._WORD_CHAR). */
static int
has_word_char(Window *w, PyObject *start, PyObject *end)
{
    Py_ssize_t a = PyLong_AsSsize_t(start), b = PyLong_AsSsize_t(end);
    int kind = PyUnicode_KIND(w->text);
    const void *data = PyUnicode_DATA(w->text);
    for (Py_ssize_t i = a; i < b; i++) {
        if (Py_UNICODE_ISALNUM(PyUnicode_READ(kind, data, i))) {
            return 1;
        }
    }
    return 0;
}

/* blocks._has_words for the kinds made here (never html). */
static int
has_words(Window *w, PyObject *kind, PyObject *start, PyObject *end)
{
    int in = PySet_Contains(w->wordless, kind);
    if (in != 0) {
        return in < 0 ? -1 : 0;
    }
    in = PySet_Contains(w->always, kind);
    if (in != 0) {
        return in < 0 ? -1 : 1;
    }
    return has_word_char(w, start, end);
}

/* Append a new reference `block` to `found` and drop it; -1 when it is NULL (an error is set)
 * or the append fails. */
static int
append_block(PyObject *found, PyObject *block)
{
    if (block == NULL) {
        return -1;
    }
    int appended = PyList_Append(found, block);
    Py_DECREF(block);
    return appended;
}

static int fold_into(Window *w, PyObject *nodes, long depth, PyObject *found);

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
static int
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

static int
fold_container(Window *w, PyObject *node, PyObject *kind, long depth, PyObject *found)
{
    if (depth + 1 >= w->max_nesting) {
        int is_list = PyObject_RichCompareBool(kind, w->list_kind, Py_EQ);
        if (is_list < 0) {
            return -1;
        }
        if (!is_list) {
            PyErr_SetString(w->fallback, "nesting");
            return -1;
        }
    }
    PyObject *kids = PyObject_GetAttr(node, s_children);
    if (kids == NULL) {
        return -1;
    }
    PyObject *inner = PyList_New(0);
    int failed = inner == NULL || fold_into(w, kids, depth + 1, inner) < 0;
    Py_DECREF(kids);
    if (failed) {
        Py_XDECREF(inner);
        return -1;
    }
    PyObject *children = PyList_AsTuple(inner);
    Py_DECREF(inner);
    Py_ssize_t first, stop;
    PyObject *start = NULL, *end = NULL, *block = NULL;
    if (children != NULL && place(w, node, &first, &stop, &start, &end) == 0
        && check_container(w, node, kind, first, stop, children) == 0) {
        block = make_block(w, kind, start, end, has_word_char(w, start, end), children);
    }
    Py_XDECREF(children);
    Py_XDECREF(start);
    Py_XDECREF(end);
    return append_block(found, block);
}

/* The Block kind of a leaf node (a borrowed reference), NULL with Fallback set for a node
 * this fold does not know. */
static PyObject *
leaf_kind(Window *w, PyObject *name, long depth)
{
    PyObject *kind = PyDict_GetItemWithError(w->leaves, name);
    if (kind != NULL || PyErr_Occurred()) {
        return kind;
    }
    if (depth) {
        int tight = PyObject_RichCompareBool(name, w->tight_text, Py_EQ);
        if (tight < 0) {
            return NULL;
        }
        if (tight) {
            return w->paragraph;
        }
    }
    PyErr_Format(w->fallback, "node %U", name);
    return NULL;
}

/* meta[key] of a node (a new reference; `fallback`, new, when the key is missing). */
static PyObject *
meta_item(PyObject *node, PyObject *key, PyObject *fallback)
{
    PyObject *meta = PyObject_GetAttr(node, s_meta);
    if (meta == NULL) {
        return NULL;
    }
    PyObject *value = PyDict_Check(meta) ? PyDict_GetItemWithError(meta, key) : NULL;
    if (value == NULL && !PyErr_Occurred()) {
        if (fallback == NULL) {
            PyErr_SetObject(PyExc_KeyError, key);
        }
        value = fallback;
    }
    Py_XINCREF(value);
    Py_DECREF(meta);
    return value;
}

/* Whether text[start:end] holds a '|' (-1 with an error set). */
static int
has_pipe(Window *w, PyObject *start, PyObject *end)
{
    return pipe_in(w, PyLong_AsSsize_t(start), PyLong_AsSsize_t(end));
}

/* Whether `raw` is its own plain text (inline.plain_text's first test): no char of the
 * window's inline marks, and no whitespace but single spaces between words. */
static int
is_plain_title(Window *w, PyObject *raw)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(raw);
    int kind = PyUnicode_KIND(raw);
    const void *data = PyUnicode_DATA(raw);
    Py_UCS4 before = ' ';
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (Py_UNICODE_ISSPACE(ch) && (ch != ' ' || before == ' ')) {
            return 0; /* a space leading or doubled, or another whitespace char */
        }
        if (ch < 128 && w->marks[ch]) {
            return 0;
        }
        before = ch;
    }
    return before != ' ' || n == 0;
}

/* The Block of a heading node holding no '|' (rust_blocks._Folder.leaf): its text node's
 * content as its raw title, read by plain_text. */
static PyObject *
heading_block(Window *w, PyObject *node, PyObject *name, PyObject *start, PyObject *end)
{
    PyObject *kids = PyObject_GetAttr(node, s_children);
    if (kids == NULL) {
        return NULL;
    }
    PyObject *parts = PyList_New(0);
    for (Py_ssize_t i = 0; parts != NULL && i < PySequence_Size(kids); i++) {
        PyObject *kid = PySequence_GetItem(kids, i);
        PyObject *content = kid ? meta_item(kid, s_content, empty_str) : NULL;
        if (content == NULL || PyList_Append(parts, content) < 0) {
            Py_CLEAR(parts);
        }
        Py_XDECREF(content);
        Py_XDECREF(kid);
    }
    Py_DECREF(kids);
    if (parts == NULL) {
        return NULL;
    }
    PyObject *joined = PyUnicode_Join(empty_str, parts);
    Py_DECREF(parts);
    PyObject *raw = joined ? PyObject_CallMethodNoArgs(joined, s_strip) : NULL;
    Py_XDECREF(joined);
    PyObject *title = raw == NULL ? NULL
                      : is_plain_title(w, raw) ? Py_NewRef(raw)
                      : PyObject_CallFunctionObjArgs(w->plain_text, raw, w->ref_map, NULL);
    PyObject *level_value = title ? meta_item(node, s_level, NULL) : NULL;
    PyObject *level = level_value ? PyNumber_Long(level_value) : NULL;
    Py_XDECREF(level_value);
    PyObject *block = NULL;
    int is_setext = level ? PyObject_RichCompareBool(name, w->lheading, Py_EQ) : -1;
    int has_title = is_setext >= 0 ? PyObject_IsTrue(title) : -1;
    if (has_title >= 0) {
        block = make_block(w, has_title ? w->heading : w->empty_heading, start, end, has_title,
                           NULL);
    }
    if (block != NULL) {
        set_slot(block, B_LEVEL, level);
        set_slot(block, B_TITLE, title);
        set_slot(block, B_PROVENANCE, is_setext ? w->setext : w->atx);
        set_slot(block, B_RAW_TITLE, raw);
    }
    Py_XDECREF(level);
    Py_XDECREF(title);
    Py_XDECREF(raw);
    return block;
}

/* The Block of a fence node whose opening line holds no '|' (rust_blocks._Folder.leaf): its
 * info string, stripped and interned, as its title. */
static PyObject *
fence_block(Window *w, PyObject *node, PyObject *kind, PyObject *start, PyObject *end)
{
    PyObject *info = meta_item(node, s_info, empty_str);
    PyObject *as_str = info ? PyObject_Str(info) : NULL;
    Py_XDECREF(info);
    PyObject *title = as_str ? PyObject_CallMethodNoArgs(as_str, s_strip) : NULL;
    Py_XDECREF(as_str);
    if (title == NULL) {
        return NULL;
    }
    PyUnicode_InternInPlace(&title);
    PyObject *block = make_block(w, kind, start, end, 1, NULL); /* fences always hold content */
    if (block != NULL) {
        set_slot(block, B_TITLE, title);
    }
    Py_DECREF(title);
    return block;
}

enum { SPECIAL, HEADING, FENCE };

/* Where a leaf that is not plain is made: a heading holding no '|' by heading_block, a fence
 * whose opening line holds none by fence_block, any other by the window's `special` (which
 * hands back what markdown-it-py may read as a table); -1 with an error set. */
static int
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
static int
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

static int
fold_leaf(Window *w, PyObject *node, PyObject *name, long depth, PyObject *found)
{
    int routed = -1;
    PyObject *kind = leaf_kind(w, name, depth);
    if (kind == NULL) {
        return -1;
    }
    Py_ssize_t first, stop;
    PyObject *start, *end, *block = NULL;
    if (place(w, node, &first, &stop, &start, &end) < 0) {
        return -1;
    }
    if (check_paragraph(w, node, kind, first, stop) < 0) {
        Py_DECREF(start);
        Py_DECREF(end);
        return -1;
    }
    int plain = PySet_Contains(w->plain, kind);
    if (plain > 0 && w->infer && depth == 0) { /* a paragraph may be an inferred heading */
        int paragraph = PyObject_RichCompareBool(kind, w->paragraph, Py_EQ);
        plain = paragraph < 0 ? -1 : !paragraph;
    }
    if (plain > 0) {
        int words = has_words(w, kind, start, end);
        if (words >= 0) {
            block = make_block(w, kind, start, end, words, NULL);
        }
    } else if (plain == 0 && (routed = route_leaf(w, kind, first, start, end)) == HEADING) {
        block = heading_block(w, node, name, start, end);
    } else if (plain == 0 && routed == FENCE) {
        block = fence_block(w, node, kind, start, end);
    } else if (plain == 0 && routed == SPECIAL) {
        block = PyObject_CallFunction(w->special, "OOOlnnOOO", node, kind, name, depth, first,
                                      stop, start, end, found);
    }
    Py_DECREF(start);
    Py_DECREF(end);
    return append_block(found, block);
}

static int
fold_into(Window *w, PyObject *nodes, long depth, PyObject *found)
{
    PyObject *seq = PySequence_Fast(nodes, "the nodes must be a sequence");
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *node = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *name = PyObject_GetAttr(node, s_name);
        if (name == NULL) {
            Py_DECREF(seq);
            return -1;
        }
        PyObject *container = PyDict_GetItemWithError(w->containers, name);
        int failed;
        if (container != NULL) {
            failed = fold_container(w, node, container, depth, found) < 0;
        } else {
            failed = PyErr_Occurred() || fold_leaf(w, node, name, depth, found) < 0;
        }
        Py_DECREF(name);
        if (failed) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

static PyObject *
fold(PyObject *Py_UNUSED(module), PyObject *args)
{
    Window w;
    PyObject *doc_starts, *win_starts, *nodes, *found, *marks;
    long depth;
    if (!PyArg_ParseTuple(args, "UOOnnO!nO!O!O!O!O!O!UUUOOOlpOlO!(OO!UUUUUU):fold", &w.text,
                          &doc_starts, &win_starts, &w.base, &w.shift, &PyDict_Type, &w.shared,
                          &w.shared_max, &PyType_Type, &w.block, &PyDict_Type, &w.containers,
                          &PyDict_Type, &w.leaves, &PyFrozenSet_Type, &w.plain,
                          &PyFrozenSet_Type, &w.wordless, &PyFrozenSet_Type, &w.always,
                          &w.paragraph, &w.tight_text, &w.list_kind, &w.fallback, &w.special,
                          &w.check, &w.max_nesting, &w.infer, &nodes, &depth, &PyList_Type,
                          &found, &w.plain_text, &PyDict_Type, &w.ref_map, &w.heading,
                          &w.empty_heading, &w.lheading, &w.atx, &w.setext, &marks)) {
        return NULL;
    }
    memset(w.marks, 0, sizeof w.marks);
    for (Py_ssize_t i = 0; i < PyUnicode_GET_LENGTH(marks); i++) {
        Py_UCS4 ch = PyUnicode_READ_CHAR(marks, i);
        if (ch >= 128) {
            PyErr_SetString(PyExc_ValueError, "the inline marks must be ASCII");
            return NULL;
        }
        w.marks[ch] = 1;
    }
    if (read_slots(&block_slots, w.block) < 0 || get_offsets(doc_starts, &w.doc_starts) < 0) {
        return NULL;
    }
    if (get_offsets(win_starts, &w.win_starts) < 0) {
        PyBuffer_Release(&w.doc_starts);
        return NULL;
    }
    int failed = fold_into(&w, nodes, depth, found) < 0;
    PyBuffer_Release(&w.doc_starts);
    PyBuffer_Release(&w.win_starts);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
line_ends(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *text;
    int itemsize;
    if (!PyArg_ParseTuple(args, "Ui:line_ends", &text, &itemsize)) {
        return NULL;
    }
    if (itemsize != 4 && itemsize != 8) {
        PyErr_SetString(PyExc_ValueError, "itemsize must be 4 or 8");
        return NULL;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), count = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < length; i++) {
        count += PyUnicode_READ(kind, data, i) == '\n';
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * itemsize);
    if (out == NULL) {
        return NULL;
    }
    char *buf = PyBytes_AS_STRING(out);
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        if (PyUnicode_READ(kind, data, i) == '\n') {
            if (itemsize == 4) {
                ((int32_t *)buf)[n++] = (int32_t)(i + 1);
            } else {
                ((int64_t *)buf)[n++] = (int64_t)(i + 1);
            }
        }
    }
    return out;
}

/* `heading_paths(blocks, heading)`: sections.Breadcrumbs' heading stack. For each block of
 * kind `heading`: its start, and the dense path of titles (stripped) and provenances in force
 * from it, a heading clearing every entry at its depth and below; each list led by 0, (), (). */
static PyObject *
heading_paths(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *blocks, *heading;
    if (!PyArg_ParseTuple(args, "O!U:heading_paths", &PyTuple_Type, &blocks, &heading)) {
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(blocks), depth = 0;
    if (PyTuple_GET_SIZE(blocks)) {
        read_slots_of(&block_slots, PyTuple_GET_ITEM(blocks, 0));
    }
    long *levels = PyMem_New(long, n + 1);
    PyObject **titles = PyMem_New(PyObject *, n + 1);
    PyObject **provenances = PyMem_New(PyObject *, n + 1);
    PyObject *starts = PyList_New(0), *paths = PyList_New(0), *provs = PyList_New(0);
    int failed = !levels || !titles || !provenances || !starts || !paths || !provs;
    if (!failed) {
        failed = PyList_Append(starts, zero) < 0 || PyList_Append(paths, empty_tuple) < 0
                 || PyList_Append(provs, empty_tuple) < 0;
    }
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        PyObject *block = PyTuple_GET_ITEM(blocks, i);
        PyObject *kind = slot_or_attr(&block_slots, block, B_KIND, s_kind);
        int is_heading = kind ? PyUnicode_Compare(kind, heading) == 0 : -1;
        Py_XDECREF(kind);
        if (is_heading <= 0) {
            failed = is_heading < 0 || PyErr_Occurred();
            continue;
        }
        PyObject *level = slot_or_attr(&block_slots, block, B_LEVEL, s_level);
        long value = level ? PyLong_AsLong(level) : -1;
        Py_XDECREF(level);
        PyObject *title = NULL, *raw = slot_or_attr(&block_slots, block, B_TITLE, s_title);
        Py_ssize_t size = raw && PyUnicode_Check(raw) ? PyUnicode_GET_LENGTH(raw) : -1;
        if (size == 0 || (size > 0 && !Py_UNICODE_ISSPACE(PyUnicode_READ_CHAR(raw, 0))
                          && !Py_UNICODE_ISSPACE(PyUnicode_READ_CHAR(raw, size - 1)))) {
            title = raw; /* nothing to strip */
        } else if (raw != NULL) {
            title = PyObject_CallMethodNoArgs(raw, s_strip);
            Py_DECREF(raw);
        }
        PyObject *provenance =
            title ? slot_or_attr(&block_slots, block, B_PROVENANCE, s_provenance) : NULL;
        PyObject *start =
            provenance ? slot_or_attr(&block_slots, block, B_START, s_start) : NULL;
        if (start == NULL || PyErr_Occurred()) {
            Py_XDECREF(title);
            Py_XDECREF(provenance);
            Py_XDECREF(start);
            failed = 1;
            break;
        }
        while (depth && levels[depth - 1] >= value) {
            depth--;
            Py_DECREF(titles[depth]);
            Py_DECREF(provenances[depth]);
        }
        levels[depth] = value;
        titles[depth] = title;
        provenances[depth] = provenance;
        depth++;
        PyObject *path = PyTuple_New(depth), *prov = PyTuple_New(depth);
        if (path != NULL && prov != NULL) {
            for (Py_ssize_t j = 0; j < depth; j++) {
                PyTuple_SET_ITEM(path, j, Py_NewRef(titles[j]));
                PyTuple_SET_ITEM(prov, j, Py_NewRef(provenances[j]));
            }
        }
        failed = path == NULL || prov == NULL || PyList_Append(starts, start) < 0
                 || PyList_Append(paths, path) < 0 || PyList_Append(provs, prov) < 0;
        Py_DECREF(start);
        Py_XDECREF(path);
        Py_XDECREF(prov);
    }
    for (Py_ssize_t j = 0; j < depth; j++) {
        Py_DECREF(titles[j]);
        Py_DECREF(provenances[j]);
    }
    PyMem_Free(levels);
    PyMem_Free(titles);
    PyMem_Free(provenances);
    if (failed) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        Py_XDECREF(starts);
        Py_XDECREF(paths);
        Py_XDECREF(provs);
        return NULL;
    }
    return Py_BuildValue("(NNN)", starts, paths, provs);
}

/* `block_spans(blocks, itemsize)`: the starts and the ends of blocks, each as the bytes of an
 * array of itemsize-byte ints (sections.Breadcrumbs' block_starts and block_ends). */
static PyObject *
block_spans(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *blocks;
    int itemsize;
    if (!PyArg_ParseTuple(args, "O!i:block_spans", &PyTuple_Type, &blocks, &itemsize)) {
        return NULL;
    }
    if (itemsize != 4 && itemsize != 8) {
        PyErr_SetString(PyExc_ValueError, "itemsize must be 4 or 8");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(blocks);
    PyObject *starts = PyBytes_FromStringAndSize(NULL, n * itemsize);
    PyObject *ends = starts ? PyBytes_FromStringAndSize(NULL, n * itemsize) : NULL;
    PyObject *names[2] = {s_start, s_end};
    int fields[2] = {B_START, B_END};
    if (PyTuple_GET_SIZE(blocks)) {
        read_slots_of(&block_slots, PyTuple_GET_ITEM(blocks, 0));
    }
    char *out[2] = {starts ? PyBytes_AS_STRING(starts) : NULL,
                    ends ? PyBytes_AS_STRING(ends) : NULL};
    for (Py_ssize_t i = 0; i < n && ends != NULL; i++) {
        for (int side = 0; side < 2; side++) {
            PyObject *value = slot_or_attr(&block_slots, PyTuple_GET_ITEM(blocks, i), fields[side],
                                          names[side]);
            Py_ssize_t offset = value ? PyLong_AsSsize_t(value) : -1;
            Py_XDECREF(value);
            if (offset == -1 && PyErr_Occurred()) {
                Py_CLEAR(starts);
                Py_CLEAR(ends);
                return NULL;
            }
            if (itemsize == 4) {
                if (offset > INT32_MAX) {
                    Py_CLEAR(starts);
                    Py_CLEAR(ends);
                    PyErr_SetString(PyExc_OverflowError, "an offset does not fit 4 bytes");
                    return NULL;
                }
                ((int32_t *)out[side])[i] = (int32_t)offset;
            } else {
                ((int64_t *)out[side])[i] = (int64_t)offset;
            }
        }
    }
    if (ends == NULL) {
        Py_XDECREF(starts);
        return NULL;
    }
    return Py_BuildValue("(NN)", starts, ends);
}

/* `gaps(blocks, text)`: where text that is not whitespace lies between blocks (in order, not
 * overlapping): (i, start, end) for each such run before blocks[i] (i = len(blocks): after the
 * last), trimmed of the whitespace around it (blocks._with_gaps). */
static PyObject *
gaps(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *blocks, *text;
    if (!PyArg_ParseTuple(args, "O!U:gaps", &PyList_Type, &blocks, &text)) {
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), pos = 0, n = PyList_GET_SIZE(blocks);
    PyObject *found = PyList_New(0);
    for (Py_ssize_t i = 0; i <= n && found != NULL; i++) {
        Py_ssize_t start = length, end = length;
        if (i < n) {
            PyObject *block = PyList_GET_ITEM(blocks, i);
            PyObject *value = PyObject_GetAttr(block, s_start);
            start = value ? PyLong_AsSsize_t(value) : -1;
            Py_XDECREF(value);
            value = start == -1 && PyErr_Occurred() ? NULL : PyObject_GetAttr(block, s_end);
            end = value ? PyLong_AsSsize_t(value) : -1;
            Py_XDECREF(value);
            if (end == -1 && PyErr_Occurred()) {
                Py_CLEAR(found);
                break;
            }
        }
        Py_ssize_t first = pos, last = start < length ? start : length;
        while (first < last && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, first))) {
            first++;
        }
        while (last > first && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, last - 1))) {
            last--;
        }
        if (first < last) {
            PyObject *gap = Py_BuildValue("(nnn)", i, first, last);
            if (gap == NULL || PyList_Append(found, gap) < 0) {
                Py_CLEAR(found);
            }
            Py_XDECREF(gap);
        }
        pos = end > pos ? end : pos;
    }
    return found;
}

static PyMethodDef methods[] = {
    {"gaps", gaps, METH_VARARGS,
     "gaps(blocks, text): (i, start, end) of each run of text that is not whitespace between "
     "blocks, before blocks[i]."},
    {"block_spans", block_spans, METH_VARARGS,
     "block_spans(blocks, itemsize): (starts, ends) of blocks, each as the bytes of an array "
     "of itemsize-byte ints."},
    {"heading_paths", heading_paths, METH_VARARGS,
     "heading_paths(blocks, heading): (starts, paths, provenances) of sections.Breadcrumbs."},
    {"line_ends", line_ends, METH_VARARGS,
     "line_ends(text, itemsize): the offsets just past each newline of text, as the bytes "
     "of an array of itemsize-byte ints."},
    {"fold", fold, METH_VARARGS,
     "fold(text, doc_starts, win_starts, base, shift, shared, shared_max, Block, containers, "
     "leaves, plain, wordless, always, paragraph, tight_text, list, Fallback, special, "
     "max_nesting, infer, nodes, depth, found, (plain_text, references, heading, "
     "empty_heading, lheading, markdown_atx, markdown_setext, inline marks)): append the Blocks "
     "of nodes to "
     "found."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "Line ends and the fold of markdown-it-pyrs nodes, in C.",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    zero = PyLong_FromLong(0);
    empty_str = PyUnicode_FromString("");
    empty_tuple = PyTuple_New(0);
    s_name = PyUnicode_InternFromString("name");
    s_srcmap = PyUnicode_InternFromString("srcmap");
    s_children = PyUnicode_InternFromString("children");
    s_meta = PyUnicode_InternFromString("meta");
    s_content = PyUnicode_InternFromString("content");
    s_level = PyUnicode_InternFromString("level");
    s_strip = PyUnicode_InternFromString("strip");
    s_kind = PyUnicode_InternFromString("kind");
    s_title = PyUnicode_InternFromString("title");
    s_provenance = PyUnicode_InternFromString("provenance");
    s_info = PyUnicode_InternFromString("info");
    s_start = PyUnicode_InternFromString("start");
    s_end = PyUnicode_InternFromString("end");
    if (!s_kind || !s_title || !s_provenance || !s_start || !s_end || !s_info) {
        return NULL;
    }
    if (!zero || !empty_str || !empty_tuple || !s_name || !s_srcmap || !s_children || !s_meta
        || !s_content || !s_level || !s_strip) {
        return NULL;
    }
    return PyModule_Create(&module);
}
