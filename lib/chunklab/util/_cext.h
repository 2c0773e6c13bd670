/* What chunklab's C extensions share (document/_native.c, chunking/_chunks.c and the files
 * each is built with): reading a record's slots (or, for another class, its attributes) and
 * setting those of a frozen record made in C, and reading the arrays of offsets a LineIndex or
 * Breadcrumbs holds (4- or 8-byte ints), binary search included. Static inline functions: each
 * extension gets its own copy. */

#ifndef CHUNKLAB_CEXT_H
#define CHUNKLAB_CEXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define MAX_SLOTS 32

/* What one file of an extension gives the others: kept out of the module's exported symbols,
 * so no other library loaded in the process can stand in for it. */
#if defined(__GNUC__)
#define INTERNAL __attribute__((visibility("hidden")))
#else
#define INTERNAL
#endif

/* The offset of each slot `names[i]` of `type` (a slotted class) into `offsets`, which are
 * left as they were when a name is not a slot of it. */
static inline int
slot_offsets(PyTypeObject *type, const char *const *names, int n, Py_ssize_t *offsets)
{
    Py_ssize_t found[MAX_SLOTS];
    if (n > MAX_SLOTS) {
        PyErr_SetString(PyExc_ValueError, "too many slots");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        PyObject *descr = PyObject_GetAttrString((PyObject *)type, names[i]);
        if (descr == NULL) {
            return -1;
        }
        if (!Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
            Py_DECREF(descr);
            PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, names[i]);
            return -1;
        }
        found[i] = ((PyMemberDescrObject *)descr)->d_member->offset;
        Py_DECREF(descr);
    }
    memcpy(offsets, found, (size_t)n * sizeof *found);
    return 0;
}

/* The slots of one class, read once: the offsets of `names` in records of `type` (NULL until
 * read). */
typedef struct {
    const char *const *names;
    int n;
    PyTypeObject *type;
    Py_ssize_t offsets[MAX_SLOTS];
} SlotTable;

/* Reads `table`'s offsets from `type` (once per class); -1 with an error when a name is not a
 * slot of it, the offsets read before kept. */
static inline int
read_slots(SlotTable *table, PyTypeObject *type)
{
    if (type != table->type) {
        if (slot_offsets(type, table->names, table->n, table->offsets) < 0) {
            return -1;
        }
        table->type = type;
    }
    return 0;
}

/* read_slots from the class of `obj` when it has the slots; another class is read attribute by
 * attribute (slot_or_attr), so no error is left. */
static inline void
read_slots_of(SlotTable *table, PyObject *obj)
{
    if (read_slots(table, Py_TYPE(obj)) < 0) {
        PyErr_Clear();
    }
}

/* obj.<name> (a new reference): read from its slot `field` when obj is of the table's class,
 * else looked up. */
static inline PyObject *
slot_or_attr(const SlotTable *table, PyObject *obj, int field, PyObject *name)
{
    if (Py_TYPE(obj) == table->type) {
        PyObject *value = *(PyObject **)((char *)obj + table->offsets[field]);
        if (value != NULL) {
            return Py_NewRef(value);
        }
    }
    return PyObject_GetAttr(obj, name);
}

/* Sets the slot at `offset` of `obj` to `value`, a new reference it takes. */
static inline void
take_slot_at(PyObject *obj, Py_ssize_t offset, PyObject *value)
{
    PyObject **slot = (PyObject **)((char *)obj + offset);
    Py_XSETREF(*slot, value);
}

static inline void
set_slot_at(PyObject *obj, Py_ssize_t offset, PyObject *value)
{
    Py_INCREF(value);
    take_slot_at(obj, offset, value);
}

/* An array of offsets (array.array 'i' or 'q') as a buffer. */
static inline int
get_offsets(PyObject *array, Py_buffer *buf)
{
    if (PyObject_GetBuffer(array, buf, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        return -1;
    }
    if (buf->itemsize != 4 && buf->itemsize != 8) {
        PyBuffer_Release(buf);
        PyErr_SetString(PyExc_TypeError, "offsets must be arrays of 4- or 8-byte ints");
        return -1;
    }
    return 0;
}

static inline Py_ssize_t
offset_at(Py_buffer *buf, Py_ssize_t i)
{
    return buf->itemsize == 4 ? (Py_ssize_t)((int32_t *)buf->buf)[i]
                              : (Py_ssize_t)((int64_t *)buf->buf)[i];
}

static inline Py_ssize_t
offset_count(Py_buffer *buf)
{
    return buf->len / buf->itemsize;
}

/* bisect.bisect_right(buf, x, lo). */
static inline Py_ssize_t
bisect_right_from(Py_buffer *buf, Py_ssize_t x, Py_ssize_t lo)
{
    Py_ssize_t hi = offset_count(buf);
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (x < offset_at(buf, mid)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

/* bisect.bisect_left(buf, x, lo). */
static inline Py_ssize_t
bisect_left_from(Py_buffer *buf, Py_ssize_t x, Py_ssize_t lo)
{
    Py_ssize_t hi = offset_count(buf);
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (offset_at(buf, mid) < x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

#endif
