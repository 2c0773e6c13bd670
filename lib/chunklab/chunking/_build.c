/* ChunkBuilder.build's loop (`build`): the Chunk of each plain piece made here, any other
 * handed to the table's `chunk` callback (the module's comment says which and how). */

#include "_chunks.h"

/* The table: per document and config, made by ChunkBuilder.native_table. */
typedef struct {
    PyTypeObject *chunk;
    PyObject *seed; /* a sha256 object fed config id, NUL, document id, NUL (utf-8) */
    Py_buffer block_starts, block_ends, heading_starts, line_starts;
    const unsigned char *flags;
    Py_ssize_t n_blocks;
    int plain_paths, number_parts;
    PyObject *kinds; /* tuple: prose, code, table, mixed, heading, front_matter */
    PyObject *doc_id, *strategy, *config_id, *structure_source, *applied, *title;
    PyObject *labels, *part_of, *chunk_of; /* labels: ChunkBuilder.labels, a list */
} Table;

static void
take_slot(PyObject *obj, int field, PyObject *value)
{
    take_slot_at(obj, chunk_slots.offsets[field], value);
}

static void
set_slot(PyObject *obj, int field, PyObject *value)
{
    set_slot_at(obj, chunk_slots.offsets[field], value);
}

/* The kind name (borrowed) of a chunk whose content adds up to `bits`, its blocks [a, b). */
static PyObject *
kind_named(Table *t, int bits, Py_ssize_t a, Py_ssize_t b)
{
    if (!bits) {
        int any = 0;
        for (Py_ssize_t i = a; i < b; i++) {
            any |= t->flags[i];
        }
        return PyTuple_GET_ITEM(t->kinds, any & HEADING ? 4 : any & FRONT_MATTER ? 5 : 0);
    }
    if (bits & TABLE) {
        return PyTuple_GET_ITEM(t->kinds, 2);
    }
    if (bits & CODE) {
        return PyTuple_GET_ITEM(t->kinds, bits == CODE ? 1 : 3);
    }
    return PyTuple_GET_ITEM(t->kinds, 0);
}

/* The chunk's id: the first 16 hex digits of the sha256 of config id, document id, start,
 * end and text, NUL between them, as utf-8 (the table's seed already fed the first two). */
static PyObject *
chunk_id(Table *t, Py_ssize_t start, Py_ssize_t end, PyObject *text)
{
    PyObject *encoded = NULL;
    const char *data;
    Py_ssize_t size;
    if (PyUnicode_IS_ASCII(text)) {
        data = (const char *)PyUnicode_DATA(text);
        size = PyUnicode_GET_LENGTH(text);
    } else {
        encoded = PyUnicode_AsUTF8String(text);
        if (encoded == NULL) {
            return NULL;
        }
        data = PyBytes_AS_STRING(encoded);
        size = PyBytes_GET_SIZE(encoded);
    }
    char numbers[64];
    int written = snprintf(numbers, sizeof numbers, "%zd%c%zd%c", start, 0, end, 0);
    PyObject *message = PyBytes_FromStringAndSize(NULL, written + size);
    PyObject *hash = message ? PyObject_CallMethodNoArgs(t->seed, s_copy) : NULL;
    PyObject *fed = NULL, *digest = NULL, *id = NULL;
    if (hash != NULL) {
        char *out = PyBytes_AS_STRING(message);
        memcpy(out, numbers, written);
        memcpy(out + written, data, size);
        fed = PyObject_CallMethodOneArg(hash, s_update, message);
    }
    if (fed != NULL) {
        digest = PyObject_CallMethodNoArgs(hash, s_digest);
    }
    if (digest != NULL && PyBytes_Check(digest) && PyBytes_GET_SIZE(digest) >= 8) {
        static const char hex[] = "0123456789abcdef";
        const unsigned char *bytes = (const unsigned char *)PyBytes_AS_STRING(digest);
        id = PyUnicode_New(16, 127);
        if (id != NULL) {
            Py_UCS1 *digits = PyUnicode_1BYTE_DATA(id);
            for (int i = 0; i < 8; i++) {
                digits[2 * i] = (Py_UCS1)hex[bytes[i] >> 4];
                digits[2 * i + 1] = (Py_UCS1)hex[bytes[i] & 15];
            }
        }
    } else if (digest != NULL) {
        PyErr_SetString(PyExc_TypeError, "the seed's digest must be bytes of a sha256");
    }
    Py_XDECREF(digest);
    Py_XDECREF(fed);
    Py_XDECREF(hash);
    Py_XDECREF(message);
    Py_XDECREF(encoded);
    return id;
}

/* The label of heading `at`: (path, provenance, embed prefix, context prefix), borrowed. */
static PyObject *
label(Table *t, Py_ssize_t at)
{
    if (at < 0 || at >= PyList_GET_SIZE(t->labels)) {
        PyErr_SetString(PyExc_IndexError, "one label per heading");
        return NULL;
    }
    PyObject *shown = PyList_GET_ITEM(t->labels, at);
    if (!PyTuple_Check(shown) || PyTuple_GET_SIZE(shown) != 4) {
        PyErr_SetString(PyExc_TypeError, "a label must be a 4-tuple");
        return NULL;
    }
    return shown;
}

/* 1 with *at the heading of a plain piece [start, end) overlapping blocks [a, b); 0 when the
 * piece is not plain after all (its anchors under two headings, a container cut). */
static int
heading_of(Table *t, Py_ssize_t start, Py_ssize_t end, Py_ssize_t a, Py_ssize_t b,
           Py_ssize_t *at)
{
    Py_ssize_t head = start, tail = start;
    int seen = 0;
    for (Py_ssize_t i = a; i < b; i++) {
        if (t->flags[i] & BODY) {
            Py_ssize_t s = offset_at(&t->block_starts, i);
            if (!seen) {
                head = s;
                seen = 1;
            }
            tail = s;
        }
    }
    if (b > a && (((t->flags[a] & CHILDREN) && offset_at(&t->block_starts, a) < start)
                  || ((t->flags[b - 1] & CHILDREN) && offset_at(&t->block_ends, b - 1) > end))) {
        return 0;
    }
    *at = bisect_right_from(&t->heading_starts, head > start ? head : start, 0) - 1;
    return *at == bisect_right_from(&t->heading_starts, tail > start ? tail : start, 0) - 1;
}

/* 1 when the piece has no text, breadcrumb or anchors of its own and its part adds nothing
 * to its path; -1 on an error. */
static int
plain_piece(Table *t, PyObject *piece, PyObject **part)
{
    if (!t->plain_paths) {
        return 0;
    }
    PyObject *value = slot_or_attr(&piece_slots, piece, P_TEXT, s_text);
    if (value == NULL) {
        return -1;
    }
    int plain = value == Py_None;
    Py_DECREF(value);
    if (plain) {
        value = slot_or_attr(&piece_slots, piece, P_BREADCRUMB, s_breadcrumb);
        if (value == NULL) {
            return -1;
        }
        plain = value == Py_None;
        Py_DECREF(value);
    }
    if (plain) {
        value = slot_or_attr(&piece_slots, piece, P_ANCHORS, s_anchors);
        if (value == NULL) {
            return -1;
        }
        int truth = PyObject_IsTrue(value);
        Py_DECREF(value);
        if (truth < 0) {
            return -1;
        }
        plain = !truth;
    }
    if (plain) {
        *part = slot_or_attr(&piece_slots, piece, P_PART, s_part);
        if (*part == NULL) {
            return -1;
        }
        plain = *part == Py_None || !t->number_parts;
    }
    return plain;
}

static PyObject *
get_int(PyObject *piece, int field, PyObject *name, Py_ssize_t *value)
{
    PyObject *found = slot_or_attr(&piece_slots, piece, field, name);
    if (found != NULL) {
        *value = PyLong_AsSsize_t(found);
        if (*value == -1 && PyErr_Occurred()) {
            Py_CLEAR(found);
        }
    }
    return found;
}

/* The Chunk of a plain piece, NULL (no error set) when it turns out not to be plain. */
static PyObject *
plain_chunk(Table *t, PyObject *piece, PyObject *part, PyObject *text, PyObject *size,
            Py_ssize_t ordinal, int *failed)
{
    Py_ssize_t start, end, at;
    PyObject *start_obj = get_int(piece, P_START, s_start, &start);
    PyObject *end_obj = start_obj ? get_int(piece, P_END, s_end, &end) : NULL;
    *failed = 1;
    if (end_obj == NULL) {
        Py_XDECREF(start_obj);
        return NULL;
    }
    Py_ssize_t a = bisect_right_from(&t->block_ends, start, 0);
    Py_ssize_t b = bisect_left_from(&t->block_starts, end, a);
    if (!heading_of(t, start, end, a, b, &at)) {
        *failed = 0;
        Py_DECREF(start_obj);
        Py_DECREF(end_obj);
        return NULL;
    }
    PyObject *shown = label(t, at);
    PyObject *id = shown ? chunk_id(t, start, end, text) : NULL;
    PyObject *part_name = NULL, *applied = NULL, *chunk = NULL;
    if (id != NULL) {
        part_name = part == Py_None ? PyUnicode_FromString("")
                                    : PyObject_CallOneArg(t->part_of, part);
    }
    if (part_name != NULL) {
        applied = slot_or_attr(&piece_slots, piece, P_STRATEGY, s_strategy);
    }
    if (applied != NULL && (!PyTuple_Check(size) || PyTuple_GET_SIZE(size) != 3)) {
        PyErr_SetString(PyExc_TypeError, "a size must be a (chars, words, tokens) tuple");
    } else if (applied != NULL) {
        chunk = t->chunk->tp_alloc(t->chunk, 0);
    }
    if (chunk != NULL) {
        int bits = 0;
        for (Py_ssize_t i = a; i < b; i++) {
            if (t->flags[i] & BODY) {
                bits |= t->flags[i] & KIND_BITS;
            }
        }
        int truth = PyObject_IsTrue(applied);
        take_slot(chunk, C_ID, Py_NewRef(id));
        set_slot(chunk, C_DOC_ID, t->doc_id);
        take_slot(chunk, C_ORDINAL, PyLong_FromSsize_t(ordinal));
        take_slot(chunk, C_START, Py_NewRef(start_obj));
        take_slot(chunk, C_END, Py_NewRef(end_obj));
        set_slot(chunk, C_TEXT, text);
        set_slot(chunk, C_BREADCRUMB, PyTuple_GET_ITEM(shown, 0));
        take_slot(chunk, C_PART, Py_NewRef(part_name));
        set_slot(chunk, C_KIND, kind_named(t, bits, a, b));
        set_slot(chunk, C_STRATEGY, t->strategy);
        set_slot(chunk, C_CONFIG_ID, t->config_id);
        set_slot(chunk, C_STRUCTURE_SOURCE, t->structure_source);
        set_slot(chunk, C_VERBATIM, Py_True);
        take_slot(chunk, C_START_LINE,
                  PyLong_FromSsize_t(bisect_right_from(&t->line_starts, start, 0)));
        take_slot(chunk, C_END_LINE,
                  PyLong_FromSsize_t(bisect_right_from(&t->line_starts, end - 1 > start ? end - 1
                                                                                 : start, 0)));
        set_slot(chunk, C_EMBED_PREFIX, PyTuple_GET_ITEM(shown, 2));
        set_slot(chunk, C_CONTEXT_PREFIX, PyTuple_GET_ITEM(shown, 3));
        set_slot(chunk, C_APPLIED_STRATEGY, truth > 0 ? applied : t->applied);
        set_slot(chunk, C_N_CHARS, PyTuple_GET_ITEM(size, 0));
        set_slot(chunk, C_N_WORDS, PyTuple_GET_ITEM(size, 1));
        set_slot(chunk, C_N_TOKENS, PyTuple_GET_ITEM(size, 2));
        set_slot(chunk, C_HEADING_PROVENANCE, PyTuple_GET_ITEM(shown, 1));
        set_slot(chunk, C_TITLE, t->title);
        if (truth < 0) {
            Py_CLEAR(chunk);
        } else {
            *failed = 0;
        }
    }
    Py_XDECREF(applied);
    Py_XDECREF(part_name);
    Py_XDECREF(id);
    Py_DECREF(start_obj);
    Py_DECREF(end_obj);
    return chunk;
}

static void
release(Table *t)
{
    PyBuffer_Release(&t->block_starts);
    PyBuffer_Release(&t->block_ends);
    PyBuffer_Release(&t->heading_starts);
    PyBuffer_Release(&t->line_starts);
}

static int
open_table(PyObject *args, Table *t)
{
    PyObject *block_starts, *block_ends, *heading_starts, *line_starts, *flags;
    PyTypeObject *piece;
    memset(t, 0, sizeof *t);
    if (!PyArg_ParseTuple(args, "O!O!OOOOOO!ppO!UUUUUUO!OO:table", &PyType_Type, &t->chunk,
                          &PyType_Type, &piece, &t->seed, &block_starts, &block_ends,
                          &heading_starts, &line_starts, &PyBytes_Type, &flags,
                          &t->plain_paths, &t->number_parts, &PyTuple_Type, &t->kinds,
                          &t->doc_id, &t->strategy, &t->config_id, &t->structure_source,
                          &t->applied, &t->title, &PyList_Type, &t->labels, &t->part_of,
                          &t->chunk_of)) {
        return -1;
    }
    if (PyTuple_GET_SIZE(t->kinds) != 6) {
        PyErr_SetString(PyExc_ValueError, "the kinds must be 6 names");
        return -1;
    }
    t->flags = (const unsigned char *)PyBytes_AS_STRING(flags);
    t->n_blocks = PyBytes_GET_SIZE(flags);
    Py_buffer *buffers[4] = {&t->block_starts, &t->block_ends, &t->heading_starts,
                             &t->line_starts};
    PyObject *arrays[4] = {block_starts, block_ends, heading_starts, line_starts};
    for (int i = 0; i < 4; i++) {
        if (get_offsets(arrays[i], buffers[i]) < 0) {
            for (int j = 0; j < i; j++) {
                PyBuffer_Release(buffers[j]);
            }
            return -1;
        }
    }
    if (offset_count(&t->block_starts) != t->n_blocks
        || offset_count(&t->block_ends) != t->n_blocks) {
        release(t);
        PyErr_SetString(PyExc_ValueError, "one flag, start and end per block");
        return -1;
    }
    if (read_slots(&chunk_slots, t->chunk) < 0 || read_slots(&piece_slots, piece) < 0) {
        release(t);
        return -1;
    }
    return 0;
}

INTERNAL PyObject *
build(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *table, *pieces, *texts, *sizes, *chunks;
    Py_ssize_t ordinal;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!n:build", &PyTuple_Type, &table, &PyList_Type,
                          &pieces, &PyList_Type, &texts, &PyList_Type, &sizes, &PyList_Type,
                          &chunks, &ordinal)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(pieces);
    if (PyList_GET_SIZE(texts) != n || PyList_GET_SIZE(sizes) != n) {
        PyErr_SetString(PyExc_ValueError, "one text and one size per piece");
        return NULL;
    }
    Table t;
    if (open_table(table, &t) < 0) {
        return NULL;
    }
    int failed = 0;
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        PyObject *piece = PyList_GET_ITEM(pieces, i), *text = PyList_GET_ITEM(texts, i);
        PyObject *size = PyList_GET_ITEM(sizes, i), *part = NULL, *chunk = NULL;
        int plain = plain_piece(&t, piece, &part);
        if (plain > 0) {
            chunk = plain_chunk(&t, piece, part, text, size, ordinal + i, &failed);
        } else {
            failed = plain < 0;
        }
        Py_XDECREF(part);
        if (chunk == NULL && !failed) { /* made in Python */
            chunk = PyObject_CallFunction(t.chunk_of, "OOOn", piece, text, size, ordinal + i);
            failed = chunk == NULL;
        }
        if (!failed) {
            failed = PyList_Append(chunks, chunk) < 0;
        }
        Py_XDECREF(chunk);
    }
    release(&t);
    if (failed) {
        return NULL;
    }
    Py_RETURN_NONE;
}
