/* The split of a document's blocks into sections (`sections`) and the packing of a section
 * whose glued groups all fit (`pack`), in chars, as heading_aware and packing do them in
 * Python. */

#include "_chunks.h"

/* A new Piece [start, end) numbered `part` of `parts` (no part when there is one). */
static PyObject *
new_piece(PyTypeObject *type, Py_ssize_t start, Py_ssize_t end, Py_ssize_t size,
          Py_ssize_t part, Py_ssize_t parts)
{
    PyObject *item = type->tp_alloc(type, 0);
    if (item == NULL) {
        return NULL;
    }
    PyObject *values[P_FIELDS] = {
        PyLong_FromSsize_t(start), PyLong_FromSsize_t(end), Py_NewRef(empty_tuple),
        Py_NewRef(Py_None), Py_NewRef(Py_None),
        parts > 1 ? Py_BuildValue("(nn)", part, parts) : Py_NewRef(Py_None),
        Py_NewRef(empty_str), size >= 0 ? PyLong_FromSsize_t(size) : Py_NewRef(Py_None)};
    int failed = 0;
    for (int f = 0; f < P_FIELDS; f++) {
        failed |= values[f] == NULL;
        take_slot_at(item, piece_slots.offsets[f], values[f]);
    }
    if (failed) {
        Py_DECREF(item);
        return NULL;
    }
    return item;
}

/* The Piece slots of `type`, and the block starts and ends as buffers (released on an error),
 * one per flag of the `n` blocks; -1 with an error set. */
static int
open_spans(PyTypeObject *type, PyObject *starts_obj, PyObject *ends_obj, Py_ssize_t n,
           Py_buffer *starts, Py_buffer *ends)
{
    if (read_slots(&piece_slots, type) < 0 || get_offsets(starts_obj, starts) < 0) {
        return -1;
    }
    if (get_offsets(ends_obj, ends) < 0) {
        PyBuffer_Release(starts);
        return -1;
    }
    if (offset_count(starts) != n || offset_count(ends) != n) {
        PyBuffer_Release(starts);
        PyBuffer_Release(ends);
        PyErr_SetString(PyExc_ValueError, "one flag, start and end per block");
        return -1;
    }
    return 0;
}

/* `sections(Piece, flags, block_starts, block_ends, limit, first, most)`: packing.sections
 * and the test of heading_aware.section_pieces in chars, from block `first` on, at most `most`
 * sections at a time (a document's pieces are never all held at once). A section opens at the
 * first block and at each heading after a content block; a section spanning at most `limit`
 * chars is its Piece (its size set), any other the (first, stop) numbers of its blocks, for
 * packing. Returns (those, the block the next call starts from: the number of blocks at the
 * end). */
INTERNAL PyObject *
sections(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *type;
    PyObject *flags_obj, *starts_obj, *ends_obj;
    Py_ssize_t limit, from, most;
    if (!PyArg_ParseTuple(args, "O!O!OOnnn:sections", &PyType_Type, &type, &PyBytes_Type,
                          &flags_obj, &starts_obj, &ends_obj, &limit, &from, &most)) {
        return NULL;
    }
    const unsigned char *flags = (const unsigned char *)PyBytes_AS_STRING(flags_obj);
    Py_ssize_t n = PyBytes_GET_SIZE(flags_obj);
    if (from < 0 || from > n || most < 1) {
        PyErr_SetString(PyExc_ValueError, "first must be a block number and most above 0");
        return NULL;
    }
    Py_buffer starts, ends;
    if (open_spans(type, starts_obj, ends_obj, n, &starts, &ends) < 0) {
        return NULL;
    }
    PyObject *found = PyList_New(0);
    Py_ssize_t first = from, next = n;
    int has_content = 0;
    for (Py_ssize_t i = from; i <= n && found != NULL; i++) {
        if (i < n && !(i > first && has_content && (flags[i] & HEADING))) {
            has_content |= (flags[i] & BODY) != 0;
            continue;
        }
        if (i == first) {
            continue; /* no blocks */
        }
        Py_ssize_t start = offset_at(&starts, first), end = offset_at(&ends, i - 1);
        PyObject *item = end - start <= limit ? new_piece(type, start, end, end - start, 1, 1)
                                              : Py_BuildValue("(nn)", first, i);
        if (item == NULL || PyList_Append(found, item) < 0) {
            Py_CLEAR(found);
        }
        Py_XDECREF(item);
        first = i;
        has_content = i < n && (flags[i] & BODY) != 0;
        if (found != NULL && i < n && PyList_GET_SIZE(found) >= most) {
            next = i; /* a section opens here: the next call starts afresh */
            break;
        }
    }
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    return found == NULL ? NULL : Py_BuildValue("(Nn)", found, next);
}

/* A table itself (not a container holding one): its kind bit, no children. */
#define IS_TABLE(f) (((f) & TABLE) && !((f) & CHILDREN))

/* `pack(Piece, flags, block_starts, block_ends, first, stop, limit, caption, caption_max,
 * tail_share)`: heading_aware.packed_pieces of the section of blocks [first, stop), in chars
 * and without overlap, when every glued group fits the limit (packing.glue, then pack's greedy
 * run and its rebalancing of a last piece under tail_share of the limit, then to_pieces); None
 * when a group does not fit (Python cuts it) or spans no char (Python carries it over). */
INTERNAL PyObject *
pack(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *type;
    PyObject *flags_obj, *starts_obj, *ends_obj;
    Py_ssize_t first, stop, limit, caption_max;
    int caption;
    double tail_share;
    if (!PyArg_ParseTuple(args, "O!O!OOnnnpnd:pack", &PyType_Type, &type, &PyBytes_Type,
                          &flags_obj, &starts_obj, &ends_obj, &first, &stop, &limit, &caption,
                          &caption_max, &tail_share)) {
        return NULL;
    }
    Py_ssize_t n_blocks = PyBytes_GET_SIZE(flags_obj);
    if (first < 0 || stop > n_blocks || first >= stop) {
        PyErr_SetString(PyExc_ValueError, "the blocks must be a non-empty range of the flags");
        return NULL;
    }
    Py_buffer starts, ends;
    if (open_spans(type, starts_obj, ends_obj, n_blocks, &starts, &ends) < 0) {
        return NULL;
    }
    const unsigned char *flags = (const unsigned char *)PyBytes_AS_STRING(flags_obj);
    Py_ssize_t count = stop - first, n = 0, pending = -1;
    Py_ssize_t *g_start = PyMem_New(Py_ssize_t, count), *g_end = PyMem_New(Py_ssize_t, count);
    Py_ssize_t *cuts = PyMem_New(Py_ssize_t, count + 1);
    Py_ssize_t *greedy = PyMem_New(Py_ssize_t, count + 1);
    PyObject *found = NULL;
    int fits = g_start && g_end && cuts && greedy;
    if (!fits) {
        PyErr_NoMemory();
    }
    /* glue: group g holds blocks [g_start[g], g_end[g]] (every group is a run of blocks) */
    for (Py_ssize_t i = first; i < stop && fits; i++) {
        unsigned char f = flags[i];
        int content = (f & BODY) != 0;
        if ((f & (HEADING | FRONT_MATTER)) || (!content && (pending >= 0 || n == 0))) {
            pending = pending >= 0 ? pending : i;
            continue;
        }
        if (!content) {
            g_end[n - 1] = i;
            continue;
        }
        Py_ssize_t last = n ? g_end[n - 1] : -1;
        if (caption && IS_TABLE(f) && n && (flags[last] & PARAGRAPH) && pending < 0
            && offset_at(&ends, last) - offset_at(&starts, last) <= caption_max) {
            g_end[n - 1] = i;
        } else {
            g_start[n] = pending >= 0 ? pending : i;
            g_end[n++] = i;
        }
        pending = -1;
    }
    if (fits && pending >= 0) {
        g_start[n] = pending;
        g_end[n++] = stop - 1;
    }
    for (Py_ssize_t g = 0; g < n && fits; g++) {
        g_start[g] = offset_at(&starts, g_start[g]); /* now the groups' spans */
        g_end[g] = offset_at(&ends, g_end[g]);
        fits = g_end[g] > g_start[g] && g_end[g] - g_start[g] <= limit;
    }
    /* pack: the greedy run (greedy[k]: the first group of piece k) */
    Py_ssize_t pieces = 0;
    for (Py_ssize_t g = 0; g < n && fits; g++) {
        if (g == 0 || g_end[g] - g_start[greedy[pieces - 1]] > limit) {
            greedy[pieces++] = g;
        }
    }
    greedy[pieces] = n;
    Py_ssize_t *chosen = greedy;
    #define JOIN(cut, k) (g_end[(cut)[(k) + 1] - 1] - g_start[(cut)[k]])
    if (fits && pieces >= 2 && (double)JOIN(greedy, pieces - 1) < tail_share * (double)limit) {
        /* _even: cut at the group ends nearest to even shares of the whole */
        Py_ssize_t total = g_end[n - 1] - g_start[0];
        cuts[0] = 0;
        for (Py_ssize_t i = 1; i < pieces; i++) {
            double target = (double)(total * i) / (double)pieces;
            Py_ssize_t lo = 0, hi = n; /* bisect_left over ends[j] = g_end[j] - g_start[0] */
            while (lo < hi) {
                Py_ssize_t mid = lo + (hi - lo) / 2;
                if ((double)(g_end[mid] - g_start[0]) < target) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            Py_ssize_t j = lo, k = j < n - 1 ? j : n - 1;
            if (j > 0 && target - (double)(g_end[j - 1] - g_start[0])
                             <= (double)(g_end[k] - g_start[0]) - target) {
                j--;
            }
            Py_ssize_t cut = j + 1 > cuts[i - 1] + 1 ? j + 1 : cuts[i - 1] + 1;
            cuts[i] = cut < n - (pieces - i) ? cut : n - (pieces - i);
        }
        cuts[pieces] = n;
        int even_fits = 1;
        Py_ssize_t smallest = -1;
        for (Py_ssize_t k = 0; k < pieces; k++) {
            Py_ssize_t size = JOIN(cuts, k);
            even_fits &= cuts[k + 1] - cuts[k] == 1 || size <= limit;
            smallest = smallest < 0 || size < smallest ? size : smallest;
        }
        if (even_fits && smallest > JOIN(greedy, pieces - 1)) {
            chosen = cuts;
        }
    }
    if (fits) {
        found = PyList_New(pieces);
        for (Py_ssize_t k = 0; k < pieces && found != NULL; k++) {
            PyObject *piece = new_piece(type, g_start[chosen[k]], g_end[chosen[k + 1] - 1], -1,
                                        k + 1, pieces);
            if (piece == NULL) {
                Py_CLEAR(found);
            } else {
                PyList_SET_ITEM(found, k, piece);
            }
        }
    } else if (!PyErr_Occurred()) {
        found = Py_NewRef(Py_None);
    }
    #undef JOIN
    PyMem_Free(g_start);
    PyMem_Free(g_end);
    PyMem_Free(cuts);
    PyMem_Free(greedy);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&ends);
    return found;
}
