/* What the files of chunklab.chunking._chunks share: a block's flags, the slots of the Chunk,
 * Piece and Block records, the strings made once by the module, and its functions.
 *
 *   _chunks.c    the module: the slot tables, its strings, the table of its functions;
 *   _build.c     ChunkBuilder.build's loop (build);
 *   _sections.c  the split of a document's blocks into sections and the packing of a section
 *                (sections, pack);
 *   _labels.c    what a document's chunks share: each heading's label and prefixes, each
 *                block's flags (labels, block_flags). */

#ifndef CHUNKLAB_CHUNKS_H
#define CHUNKLAB_CHUNKS_H

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
enum { P_START, P_END, P_ANCHORS, P_TEXT, P_BREADCRUMB, P_PART, P_STRATEGY, P_SIZE, P_FIELDS };
enum { K_KIND, K_CONTENT, K_CHILDREN, K_FIELDS };

extern INTERNAL SlotTable chunk_slots, piece_slots, block_slots;
extern INTERNAL PyObject *empty_tuple, *empty_str, *s_crumb, *s_dash, *s_blank;
extern INTERNAL PyObject *s_start, *s_end, *s_text, *s_breadcrumb, *s_anchors, *s_part,
    *s_strategy, *s_copy, *s_update, *s_digest, *s_kind, *s_content, *s_children;

INTERNAL PyObject *build(PyObject *module, PyObject *args);
INTERNAL PyObject *sections(PyObject *module, PyObject *args);
INTERNAL PyObject *pack(PyObject *module, PyObject *args);
INTERNAL PyObject *labels(PyObject *module, PyObject *args);
INTERNAL PyObject *block_flags(PyObject *module, PyObject *args);

#endif
