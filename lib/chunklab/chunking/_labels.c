/* What a document's chunks share, made once per document: each heading's label and prefixes
 * (`labels`) and each block's flags (`block_flags`). */

#include "_chunks.h"

/* `labels(paths, provenances, repeated, title, head, tail, prefix)`: ChunkBuilder.labels for a
 * prefix template of one {path} between `head` and `tail`. Each heading's path and provenance,
 * their first entry dropped when it is in `repeated` (first headings that repeat the title),
 * and with `prefix` the embed prefix head + title > path + tail and the context prefix
 * title - path, each ended by a blank line (else two empty strings). */
INTERNAL PyObject *
labels(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *paths, *provenances, *repeated, *title, *head, *tail;
    int prefix;
    if (!PyArg_ParseTuple(args, "O!O!OUUUp:labels", &PyList_Type, &paths, &PyList_Type,
                          &provenances, &repeated, &title, &head, &tail, &prefix)) {
        return NULL;
    }
    if (!PyAnySet_Check(repeated)) {
        PyErr_SetString(PyExc_TypeError, "repeated must be a set");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(paths);
    if (PyList_GET_SIZE(provenances) != n) {
        PyErr_SetString(PyExc_ValueError, "one provenance per path");
        return NULL;
    }
    PyObject *found = PyList_New(n);
    for (Py_ssize_t i = 0; i < n && found != NULL; i++) {
        PyObject *path = PyList_GET_ITEM(paths, i), *prov = PyList_GET_ITEM(provenances, i);
        if (!PyTuple_Check(path) || !PyTuple_Check(prov)) {
            PyErr_SetString(PyExc_TypeError, "paths and provenances must be tuples");
            Py_CLEAR(found);
            break;
        }
        int drop = PyTuple_GET_SIZE(path) ? PySet_Contains(repeated, PyTuple_GET_ITEM(path, 0))
                                          : 0;
        PyObject *kept = NULL, *kept_prov = NULL, *embed = NULL, *context = NULL;
        if (drop >= 0) {
            kept = drop ? PyTuple_GetSlice(path, 1, PY_SSIZE_T_MAX) : Py_NewRef(path);
            kept_prov = drop ? PyTuple_GetSlice(prov, 1, PY_SSIZE_T_MAX) : Py_NewRef(prov);
        }
        if (kept != NULL && kept_prov != NULL && !prefix) {
            embed = Py_NewRef(empty_str);
            context = Py_NewRef(empty_str);
        } else if (kept != NULL && kept_prov != NULL) {
            int has_path = PyTuple_GET_SIZE(kept) > 0;
            PyObject *joined = has_path ? PyUnicode_Join(s_crumb, kept) : Py_NewRef(empty_str);
            if (joined != NULL) {
                PyObject *parts = Py_BuildValue("[OOOOOO]", head, title,
                                                has_path ? s_crumb : empty_str, joined, tail,
                                                s_blank);
                embed = parts ? PyUnicode_Join(empty_str, parts) : NULL;
                Py_XDECREF(parts);
                parts = embed ? Py_BuildValue("[OOOO]", title, has_path ? s_dash : empty_str,
                                              joined, s_blank) : NULL;
                context = parts ? PyUnicode_Join(empty_str, parts) : NULL;
                Py_XDECREF(parts);
                Py_DECREF(joined);
            }
        }
        PyObject *label = context ? PyTuple_Pack(4, kept, kept_prov, embed, context) : NULL;
        Py_XDECREF(kept);
        Py_XDECREF(kept_prov);
        Py_XDECREF(embed);
        Py_XDECREF(context);
        if (label == NULL) {
            Py_CLEAR(found);
        } else {
            PyList_SET_ITEM(found, i, label);
        }
    }
    return found;
}

/* What a block kind adds to a chunk's kind (build.kind_bits). */
static int
kind_bit(PyObject *kind)
{
    if (PyUnicode_CompareWithASCIIString(kind, "table") == 0) {
        return TABLE;
    }
    if (PyUnicode_CompareWithASCIIString(kind, "fence") == 0
        || PyUnicode_CompareWithASCIIString(kind, "code") == 0) {
        return CODE;
    }
    return KIND_BITS & ~(TABLE | CODE);
}

static int
is_atomic(PyObject *kind)
{
    return PyUnicode_CompareWithASCIIString(kind, "fence") == 0
           || PyUnicode_CompareWithASCIIString(kind, "code") == 0
           || PyUnicode_CompareWithASCIIString(kind, "table") == 0
           || PyUnicode_CompareWithASCIIString(kind, "deep_text") == 0;
}

/* The kind bits of the fences, code blocks and tables nested in `children` (blocks.ATOMIC, as
 * atomic_blocks finds them), -1 on an error. */
static int
nested_bits(PyObject *children)
{
    int bits = 0;
    Py_ssize_t n = PyTuple_Check(children) ? PyTuple_GET_SIZE(children) : 0;
    for (Py_ssize_t i = 0; i < n && bits >= 0; i++) {
        PyObject *child = PyTuple_GET_ITEM(children, i);
        PyObject *kind = slot_or_attr(&block_slots, child, K_KIND, s_kind);
        PyObject *kids =
            kind ? slot_or_attr(&block_slots, child, K_CHILDREN, s_children) : NULL;
        if (kids == NULL) {
            bits = -1;
        } else if (is_atomic(kind)) {
            bits |= kind_bit(kind);
        } else {
            int inner = nested_bits(kids);
            bits = inner < 0 ? -1 : bits | inner;
        }
        Py_XDECREF(kind);
        Py_XDECREF(kids);
    }
    return bits;
}

/* `block_flags(blocks)`: each block's flags (ChunkBuilder.native_table): its kind bits with
 * those of the fences and tables nested in it when it is content, then BODY, CHILDREN,
 * HEADING, FRONT_MATTER, PARAGRAPH. */
INTERNAL PyObject *
block_flags(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *blocks;
    if (!PyArg_ParseTuple(args, "O!:block_flags", &PyTuple_Type, &blocks)) {
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(blocks);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL) {
        return NULL;
    }
    unsigned char *flags = (unsigned char *)PyBytes_AS_STRING(out);
    if (n) {
        read_slots_of(&block_slots, PyTuple_GET_ITEM(blocks, 0));
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *block = PyTuple_GET_ITEM(blocks, i);
        PyObject *kind = slot_or_attr(&block_slots, block, K_KIND, s_kind);
        PyObject *content =
            kind ? slot_or_attr(&block_slots, block, K_CONTENT, s_content) : NULL;
        PyObject *kids =
            content ? slot_or_attr(&block_slots, block, K_CHILDREN, s_children) : NULL;
        int flag = -1;
        if (kids != NULL) {
            int heading = PyUnicode_CompareWithASCIIString(kind, "heading") == 0;
            int front = PyUnicode_CompareWithASCIIString(kind, "front_matter") == 0;
            int truth = PyObject_IsTrue(content), has_kids = PyObject_IsTrue(kids);
            int body = truth > 0 && !heading && !front;
            int nested = body && has_kids > 0 ? nested_bits(kids) : 0;
            if (truth >= 0 && has_kids >= 0 && nested >= 0) {
                int paragraph = PyUnicode_CompareWithASCIIString(kind, "paragraph") == 0;
                flag = (body ? kind_bit(kind) | nested | BODY : 0) | (has_kids ? CHILDREN : 0)
                       | (heading ? HEADING : 0) | (front ? FRONT_MATTER : 0)
                       | (paragraph ? PARAGRAPH : 0);
            }
        }
        Py_XDECREF(kind);
        Py_XDECREF(content);
        Py_XDECREF(kids);
        if (flag < 0) {
            Py_DECREF(out);
            return NULL;
        }
        flags[i] = (unsigned char)flag;
    }
    return out;
}
