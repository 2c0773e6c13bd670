/* chunklab.chunking._chunks: ChunkBuilder.build's loop in C.
 *
 * `build(table, pieces, texts, sizes, chunks)` appends the Chunk of each piece to `chunks` as
 * ChunkBuilder.chunk (build.py) makes it. A plain piece (no text, breadcrumb or anchors of its
 * own, its content under one heading, no container cut by its span) is made here: the blocks
 * it overlaps found by binary search, its kind from each block's kind bits, its label from the
 * table's labels (`ChunkBuilder.labels`, one per heading), its id the sha256 of the same bytes,
 * its slots set directly. Any other piece is made by the table's `chunk` callback, in Python.
 * tests/test_chunk_records.py holds the chunks of both to be equal.
 *
 * `block_flags(blocks)` makes the table's flags of a document's blocks; `sections(...)` splits
 * the blocks into sections by those flags, a section within the size in chars already its Piece;
 * `pack(...)` packs a longer one whose glued groups all fit; `labels(...)` makes each heading's
 * label and prefixes (tests/test_packing_shortcuts.py holds the pieces to those found in
 * Python, tests/test_chunk_records.py the labels to the Python labels). */

#include "../util/_cext.h"

/* A block's flags (`ChunkBuilder.native_table`): its kind bits, then what it is. */
#define KIND_BITS 7
#define TABLE 1
#define CODE 2
#define BODY 8
#define CHILDREN 16
#define HEADING 32
#define FRONT_MATTER 64
#define PARAGRAPH 128

enum { C_ID, C_DOC_ID, C_ORDINAL, C_START, C_END, C_TEXT, C_BREADCRUMB, C_PART, C_KIND,
       C_STRATEGY, C_CONFIG_ID, C_STRUCTURE_SOURCE, C_VERBATIM, C_START_LINE, C_END_LINE,
       C_EMBED_PREFIX, C_CONTEXT_PREFIX, C_APPLIED_STRATEGY, C_N_CHARS, C_N_WORDS, C_N_TOKENS,
       C_HEADING_PROVENANCE, C_TITLE, C_FIELDS };
static const char *const chunk_fields[C_FIELDS] = {
    "id", "doc_id", "ordinal", "start", "end", "text", "breadcrumb", "part", "kind", "strategy",
    "config_id", "structure_source", "verbatim", "start_line", "end_line", "embed_prefix",
    "context_prefix", "applied_strategy", "n_chars", "n_words", "n_tokens",
    "heading_provenance", "title"};
static SlotTable chunk_slots = {chunk_fields, C_FIELDS};

enum { P_START, P_END, P_ANCHORS, P_TEXT, P_BREADCRUMB, P_PART, P_STRATEGY, P_SIZE, P_FIELDS };
static const char *const piece_fields[P_FIELDS] = {
    "start", "end", "anchors", "text", "breadcrumb", "part", "strategy", "size"};
static SlotTable piece_slots = {piece_fields, P_FIELDS};
static PyObject *empty_tuple, *empty_str, *s_crumb, *s_dash, *s_blank;
static PyObject *s_start, *s_end, *s_text, *s_breadcrumb, *s_anchors, *s_part, *s_strategy,
    *s_copy, *s_update, *s_digest, *s_kind, *s_content, *s_children;

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

enum { K_KIND, K_CONTENT, K_CHILDREN, K_FIELDS };
static const char *const block_fields[K_FIELDS] = {"kind", "content", "children"};
static SlotTable block_slots = {block_fields, K_FIELDS};

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

static PyObject *
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

/* `sections(Piece, flags, block_starts, block_ends, limit, first, most)`: packing.sections
 * and the test of heading_aware.section_pieces in chars, from block `first` on, at most `most`
 * sections at a time (a document's pieces are never all held at once). A section opens at the
 * first block and at each heading after a content block; a section spanning at most `limit`
 * chars is its Piece (its size set), any other the (first, stop) numbers of its blocks, for
 * packing. Returns (those, the block the next call starts from: the number of blocks at the
 * end). */
static PyObject *
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
    if (read_slots(&piece_slots, type) < 0 || get_offsets(starts_obj, &starts) < 0) {
        return NULL;
    }
    if (get_offsets(ends_obj, &ends) < 0) {
        PyBuffer_Release(&starts);
        return NULL;
    }
    PyObject *found = NULL;
    if (offset_count(&starts) != n || offset_count(&ends) != n) {
        PyErr_SetString(PyExc_ValueError, "one flag, start and end per block");
    } else {
        found = PyList_New(0);
    }
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

/* `labels(paths, provenances, repeated, title, head, tail, prefix)`: ChunkBuilder.labels for a
 * prefix template of one {path} between `head` and `tail`. Each heading's path and provenance,
 * their first entry dropped when it is in `repeated` (first headings that repeat the title),
 * and with `prefix` the embed prefix head + title > path + tail and the context prefix
 * title - path, each ended by a blank line (else two empty strings). */
static PyObject *
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

/* A table itself (not a container holding one): its kind bit, no children. */
#define IS_TABLE(f) (((f) & TABLE) && !((f) & CHILDREN))

/* `pack(Piece, flags, block_starts, block_ends, first, stop, limit, caption, caption_max,
 * tail_share)`: heading_aware.packed_pieces of the section of blocks [first, stop), in chars
 * and without overlap, when every glued group fits the limit (packing.glue, then pack's greedy
 * run and its rebalancing of a last piece under tail_share of the limit, then to_pieces); None
 * when a group does not fit (Python cuts it) or spans no char (Python carries it over). */
static PyObject *
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
    if (read_slots(&piece_slots, type) < 0 || get_offsets(starts_obj, &starts) < 0) {
        return NULL;
    }
    if (get_offsets(ends_obj, &ends) < 0) {
        PyBuffer_Release(&starts);
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
    if (offset_count(&starts) != n_blocks || offset_count(&ends) != n_blocks) {
        PyErr_SetString(PyExc_ValueError, "one flag, start and end per block");
        fits = 0;
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
static PyObject *
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

static PyMethodDef methods[] = {
    {"pack", pack, METH_VARARGS,
     "pack(Piece, flags, block_starts, block_ends, first, stop, limit, caption, caption_max, "
     "tail_share): the Pieces of a section whose glued groups all fit, packed in chars; else "
     "None."},
    {"labels", labels, METH_VARARGS,
     "labels(paths, provenances, repeated, title, head, tail, prefix): (path, provenance, "
     "embed prefix, context prefix) of each heading, as ChunkBuilder.labels makes them."},
    {"sections", sections, METH_VARARGS,
     "sections(Piece, flags, block_starts, block_ends, limit, first, most): up to most "
     "sections from block first: the Piece of each spanning at most limit chars, the (first, "
     "stop) numbers of the blocks of any other; and the block to go on from."},
    {"block_flags", block_flags, METH_VARARGS,
     "block_flags(blocks): the flags of each block, as ChunkBuilder.native_table makes them."},
    {"build", build, METH_VARARGS,
     "build(table, pieces, texts, sizes, chunks, ordinal): append the Chunk of each piece to "
     "chunks, the first numbered ordinal; table: ChunkBuilder.native_table()."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_chunks", "ChunkBuilder.build's loop in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__chunks(void)
{
    empty_tuple = PyTuple_New(0);
    empty_str = PyUnicode_FromString("");
    s_crumb = PyUnicode_FromString(" > ");
    s_dash = PyUnicode_FromString(" \u2014 ");
    s_blank = PyUnicode_FromString("\n\n");
    if (!empty_tuple || !empty_str || !s_crumb || !s_dash || !s_blank) {
        return NULL;
    }
    s_start = PyUnicode_InternFromString("start");
    s_end = PyUnicode_InternFromString("end");
    s_text = PyUnicode_InternFromString("text");
    s_breadcrumb = PyUnicode_InternFromString("breadcrumb");
    s_anchors = PyUnicode_InternFromString("anchors");
    s_part = PyUnicode_InternFromString("part");
    s_strategy = PyUnicode_InternFromString("strategy");
    s_copy = PyUnicode_InternFromString("copy");
    s_update = PyUnicode_InternFromString("update");
    s_digest = PyUnicode_InternFromString("digest");
    s_kind = PyUnicode_InternFromString("kind");
    s_content = PyUnicode_InternFromString("content");
    s_children = PyUnicode_InternFromString("children");
    if (!s_kind || !s_content || !s_children) {
        return NULL;
    }
    if (!s_start || !s_end || !s_text || !s_breadcrumb || !s_anchors || !s_part || !s_strategy
        || !s_copy || !s_update || !s_digest) {
        return NULL;
    }
    return PyModule_Create(&module);
}
