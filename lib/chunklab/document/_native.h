/* What the files of chunklab.document._native share: the window the fold reads, the Block
 * slots, the strings made once by the module, and what each file gives the others.
 *
 *   _native.c       the module: its strings, line_ends, gaps, the table of its functions;
 *   _fold.c         the fold of markdown-it-pyrs's nodes into Blocks (fold);
 *   _leaves.c       the Blocks of heading and fence leaves;
 *   _differences.c  what the fold hands to Python's check (rust_differences.py) or `special`;
 *   _breadcrumbs.c  the heading stack and block spans of sections.Breadcrumbs. */

#ifndef CHUNKLAB_NATIVE_H
#define CHUNKLAB_NATIVE_H

#include "../util/_cext.h"

/* The window: what the callers set up in rust_blocks._native_window. */
typedef struct {
    PyObject *text;         /* the document (str) */
    Py_buffer doc_starts;   /* its line starts (array of int32 or int64) */
    Py_buffer win_starts;   /* the window's line starts, in its own unit (bytes or chars) */
    Py_ssize_t base, shift; /* offset of the window in win_starts' unit; its first line */
    PyObject *shared;       /* dict: one int object per offset recently made */
    Py_ssize_t shared_max;
    PyTypeObject *block;    /* the Block class */
    PyObject *containers, *leaves; /* dicts: node name -> Block kind */
    PyObject *plain, *wordless, *always; /* frozensets of kinds */
    PyObject *paragraph, *tight_text, *list_kind;
    PyObject *fallback;     /* the Fallback exception class */
    PyObject *special;      /* callable(node, kind, name, depth, first, stop, start, end, found) */
    PyObject *check;        /* callable(node, kind, first, stop, children): Fallback or None */
    long max_nesting;
    int infer;
    /* headings: plain_text, the window's link definitions (label -> url), the kinds heading and
     * empty_heading, the node name lheading, the provenances markdown_atx and markdown_setext,
     * the inline marks (a title holding none, its words single-spaced, is its own text) */
    PyObject *plain_text, *ref_map, *heading, *empty_heading, *lheading, *atx, *setext;
    unsigned char marks[128]; /* ASCII chars that may start inline syntax (inline.py) */
} Window;

/* Offsets of the Block slots, read from its member descriptors. */
enum { B_KIND, B_START, B_END, B_LEVEL, B_TITLE, B_PROVENANCE, B_RAW_TITLE, B_CONTENT,
       B_CHILDREN, B_FIELDS };
extern INTERNAL SlotTable block_slots;
extern INTERNAL PyObject *zero, *empty_str, *empty_tuple;
extern INTERNAL PyObject *s_name, *s_srcmap, *s_children, *s_meta, *s_content, *s_level,
    *s_strip, *s_kind, *s_title, *s_provenance, *s_start, *s_end, *s_info;

/* _fold.c */
INTERNAL void set_slot(PyObject *obj, int field, PyObject *value);
INTERNAL PyObject *make_block(Window *w, PyObject *kind, PyObject *start, PyObject *end,
                              int content, PyObject *children);
INTERNAL PyObject *fold(PyObject *module, PyObject *args);

/* _leaves.c */
INTERNAL PyObject *heading_block(Window *w, PyObject *node, PyObject *name, PyObject *start,
                                 PyObject *end);
INTERNAL PyObject *fence_block(Window *w, PyObject *node, PyObject *kind, PyObject *start,
                               PyObject *end);

/* _differences.c */
enum { SPECIAL, HEADING, FENCE };
INTERNAL int check_container(Window *w, PyObject *node, PyObject *kind, Py_ssize_t first,
                             Py_ssize_t stop, PyObject *children);
INTERNAL int check_paragraph(Window *w, PyObject *node, PyObject *kind, Py_ssize_t first,
                             Py_ssize_t stop);
INTERNAL int route_leaf(Window *w, PyObject *kind, Py_ssize_t first, PyObject *start,
                        PyObject *end);

/* _breadcrumbs.c */
INTERNAL PyObject *heading_paths(PyObject *module, PyObject *args);
INTERNAL PyObject *block_spans(PyObject *module, PyObject *args);

#endif
