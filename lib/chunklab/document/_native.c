/* chunklab.document._native: the document stage's work in C where Python costs most.
 *
 * `line_ends(text, itemsize)`: the offsets just past each "\n" of a text, as the bytes of an
 * array of 4- or 8-byte ints (lines.line_ends, without a string per line).
 *
 * `gaps(blocks, text)`: the text between blocks that is not whitespace (blocks._gaps).
 *
 * `heading_paths(blocks, heading)`: the heading stack of sections.Breadcrumbs;
 * `block_spans(blocks, itemsize)`: its block starts and ends (both in _breadcrumbs.c).
 *
 * `fold(...)`: the fold of markdown-it-pyrs's node tree into Blocks (_fold.c, with _leaves.c
 * and _differences.c; _native.h says what each file holds). tests/test_native.py holds the
 * Blocks to those of the Python fold, and the line ends to those of lines.line_ends. */

#include "_native.h"

static const char *const block_fields[B_FIELDS] = {
    "kind", "start", "end", "level", "title", "provenance", "raw_title", "content", "children"};
INTERNAL SlotTable block_slots = {block_fields, B_FIELDS};
INTERNAL PyObject *zero, *empty_str, *empty_tuple;
INTERNAL PyObject *s_name, *s_srcmap, *s_children, *s_meta, *s_content, *s_level, *s_strip,
    *s_kind, *s_title, *s_provenance, *s_start, *s_end, *s_info;

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
