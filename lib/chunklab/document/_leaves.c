/* The Blocks of the heading and fence leaves the fold makes in C (rust_blocks._Folder.leaf):
 * a heading's raw title from its text node, read by plain_text unless it is plain already, and
 * a fence's info string as its title. */

#include "_native.h"

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
INTERNAL PyObject *
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
INTERNAL PyObject *
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
