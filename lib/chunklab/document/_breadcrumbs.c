/* sections.Breadcrumbs' tables in C: the heading stack (`heading_paths`) and the starts and
 * ends of the blocks (`block_spans`). */

#include "_native.h"

/* `heading_paths(blocks, heading)`: sections.Breadcrumbs' heading stack. For each block of
 * kind `heading`: its start, and the dense path of titles (stripped) and provenances in force
 * from it, a heading clearing every entry at its depth and below; each list led by 0, (), (). */
INTERNAL PyObject *
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
INTERNAL PyObject *
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
