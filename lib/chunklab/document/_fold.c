/* `fold(...)`: the fold of markdown-it-pyrs's node tree into Blocks. It does for each node what
 * _Folder.fold in rust_blocks.py does: a node's byte offsets become the document lines they
 * lie on, those lines its chars (trailing whitespace left out), and a container, a plain leaf
 * (paragraph, code, rule, front matter, a tight item's text), a heading holding no '|' (its
 * title read by plain_text unless it is plain already) or a fence whose opening line holds
 * none becomes its Block here, its slots set directly. Every other leaf (a table, HTML block,
 * reference definition, a paragraph read for an inferred heading, or a heading or fence with
 * a '|') is handed to the window's `special` callback, which makes its Block in Python. A
 * node _differences.c picks (a quote, an item with a tab among its leading marks, a container
 * or paragraph that may hold or head a table) first goes to its `check` callback, which hands
 * back a document markdown-it-py may read otherwise. Heading and fence Blocks are made in
 * _leaves.c. */

#include "_native.h"

INTERNAL void
set_slot(PyObject *obj, int field, PyObject *value)
{
    set_slot_at(obj, block_slots.offsets[field], value);
}

/* A Block with its defaults but kind, start, end, content and children. */
INTERNAL PyObject *
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

INTERNAL PyObject *
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
