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
 * Python, tests/test_chunk_records.py the labels to the Python labels). _chunks.h says which
 * file holds each. */

#include "_chunks.h"

static const char *const chunk_fields[C_FIELDS] = {
    "id", "doc_id", "ordinal", "start", "end", "text", "breadcrumb", "part", "kind", "strategy",
    "config_id", "structure_source", "verbatim", "start_line", "end_line", "embed_prefix",
    "context_prefix", "applied_strategy", "n_chars", "n_words", "n_tokens",
    "heading_provenance", "title"};
INTERNAL SlotTable chunk_slots = {chunk_fields, C_FIELDS};

static const char *const piece_fields[P_FIELDS] = {
    "start", "end", "anchors", "text", "breadcrumb", "part", "strategy", "size"};
INTERNAL SlotTable piece_slots = {piece_fields, P_FIELDS};
INTERNAL PyObject *empty_tuple, *empty_str, *s_crumb, *s_dash, *s_blank;
INTERNAL PyObject *s_start, *s_end, *s_text, *s_breadcrumb, *s_anchors, *s_part, *s_strategy,
    *s_copy, *s_update, *s_digest, *s_kind, *s_content, *s_children;

static const char *const block_fields[K_FIELDS] = {"kind", "content", "children"};
INTERNAL SlotTable block_slots = {block_fields, K_FIELDS};

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
