/* chunklab.chunking._wordtable: the word cache of sizes.py in C.
 *
 * A WordTable maps whitespace-separated words to their token counts. Its `sizes` method gives
 * each text's (chars, words, tokens) the way `str.split()` and a dict lookup per word would,
 * without making a string object per word: words are found by Py_UNICODE_ISSPACE (what
 * str.split() cuts at), hashed over their code points, and looked up in an open-addressing
 * table whose slots hold the words as str objects. tests/test_word_table.py holds it equal
 * to the Python table of word_table.py. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define UNKNOWN (-1) /* a text holds a word the table has no count for */
#define UNSAFE (-2)  /* a text holds a char of `unsafe`: it is encoded whole */
#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL

typedef struct {
    Py_uhash_t hash;
    PyObject *word; /* NULL: empty slot */
    long count;
} Slot;

typedef struct {
    PyObject_HEAD
    Slot *slots;
    Py_ssize_t mask; /* capacity - 1, capacity a power of two */
    Py_ssize_t used;
    PyObject *unsafe; /* str: chars that make a text be encoded whole */
    unsigned char stop1[256]; /* 1-byte chars: 1 whitespace, 2 an unsafe char (sizes_1) */
} WordTable;

static Py_uhash_t
span_hash(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    Py_uhash_t h = FNV_OFFSET; /* FNV-1a over code points, as EACH_WORD makes it */
    for (Py_ssize_t i = start; i < end; i++) {
        h ^= (Py_uhash_t)PyUnicode_READ(kind, data, i);
        h *= FNV_PRIME;
    }
    return h;
}

static int
same_word(PyObject *word, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    if (PyUnicode_GET_LENGTH(word) != end - start) {
        return 0;
    }
    int wkind = PyUnicode_KIND(word);
    const void *wdata = PyUnicode_DATA(word);
    if (wkind == kind) {
        return memcmp(wdata, (const char *)data + start * kind, (size_t)(end - start) * kind) == 0;
    }
    for (Py_ssize_t i = 0; i < end - start; i++) {
        if (PyUnicode_READ(wkind, wdata, i) != PyUnicode_READ(kind, data, start + i)) {
            return 0;
        }
    }
    return 1;
}

/* The slot holding the word text[start:end), or the empty slot where it would go. */
static Slot *
find(WordTable *self, Py_uhash_t hash, int kind, const void *data, Py_ssize_t start,
     Py_ssize_t end)
{
    Py_ssize_t i = (Py_ssize_t)(hash & (Py_uhash_t)self->mask);
    for (;;) {
        Slot *slot = &self->slots[i];
        if (slot->word == NULL ||
            (slot->hash == hash && same_word(slot->word, kind, data, start, end))) {
            return slot;
        }
        i = (i + 1) & self->mask;
    }
}

static int
allocate(WordTable *self, Py_ssize_t capacity)
{
    Slot *slots = PyMem_Calloc((size_t)capacity, sizeof(Slot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->slots = slots;
    self->mask = capacity - 1;
    self->used = 0;
    return 0;
}

static int
grow(WordTable *self)
{
    Slot *old = self->slots;
    Py_ssize_t old_capacity = self->mask + 1;
    if (allocate(self, old_capacity * 2) < 0) {
        self->slots = old;
        return -1;
    }
    for (Py_ssize_t i = 0; i < old_capacity; i++) {
        if (old[i].word != NULL) {
            Py_ssize_t j = (Py_ssize_t)(old[i].hash & (Py_uhash_t)self->mask);
            while (self->slots[j].word != NULL) {
                j = (j + 1) & self->mask;
            }
            self->slots[j] = old[i];
            self->used++;
        }
    }
    PyMem_Free(old);
    return 0;
}

static void
release(WordTable *self)
{
    if (self->slots != NULL) {
        for (Py_ssize_t i = 0; i <= self->mask; i++) {
            Py_XDECREF(self->slots[i].word);
        }
        PyMem_Free(self->slots);
        self->slots = NULL;
    }
}

static int
is_unsafe(WordTable *self, Py_UCS4 ch)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(self->unsafe);
    int kind = PyUnicode_KIND(self->unsafe);
    const void *data = PyUnicode_DATA(self->unsafe);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyUnicode_READ(kind, data, i) == ch) {
            return 1;
        }
    }
    return 0;
}

/* Calls found(self, hash, kind, data, start, end, arg) for each word of text, its hash made
 * while the word is read; stops at a nonzero return and gives it. With stop_unsafe, gives
 * UNSAFE at once when the text holds an unsafe char. One loop per str kind, reading the chars
 * directly. */
typedef int (*word_visitor)(WordTable *, Py_uhash_t, int, const void *, Py_ssize_t,
                            Py_ssize_t, void *);

#define PLAIN_SPACE(ch) ((ch) == ' ' || (ch) == '\n' || (ch) == '\t' || (ch) == '\r')

#define EACH_WORD(NAME, CHAR)                                                                  \
    static int NAME(WordTable *self, const CHAR *chars, Py_ssize_t n, int kind,                \
                    word_visitor found, void *arg, Py_ssize_t *words, int stop_unsafe)         \
    {                                                                                          \
        Py_ssize_t i = 0;                                                                      \
        while (i < n) {                                                                        \
            Py_UCS4 ch = chars[i];                                                             \
            if (Py_UNICODE_ISSPACE(ch)) {                                                                \
                if (stop_unsafe && !PLAIN_SPACE(ch) && is_unsafe(self, ch)) {                  \
                    return UNSAFE;                                                             \
                }                                                                              \
                i++;                                                                           \
                continue;                                                                      \
            }                                                                                  \
            Py_ssize_t start = i;                                                              \
            Py_uhash_t h = FNV_OFFSET;                                                         \
            do {                                                                               \
                h = (h ^ (Py_uhash_t)ch) * FNV_PRIME;                                          \
                if (++i == n) {                                                                \
                    break;                                                                     \
                }                                                                              \
                ch = chars[i];                                                                 \
            } while (!Py_UNICODE_ISSPACE(ch));                                                           \
            (*words)++;                                                                        \
            int stop = found(self, h, kind, chars, start, i, arg);                             \
            if (stop) {                                                                        \
                return stop;                                                                   \
            }                                                                                  \
        }                                                                                      \
        return 0;                                                                              \
    }

EACH_WORD(each_word_1, Py_UCS1)
EACH_WORD(each_word_2, Py_UCS2)
EACH_WORD(each_word_4, Py_UCS4)

static int
each_word(WordTable *self, PyObject *text, word_visitor found, void *arg, Py_ssize_t *words,
          int stop_unsafe)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    *words = 0;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        return each_word_1(self, PyUnicode_1BYTE_DATA(text), n, PyUnicode_1BYTE_KIND, found,
                           arg, words, stop_unsafe);
    case PyUnicode_2BYTE_KIND:
        return each_word_2(self, PyUnicode_2BYTE_DATA(text), n, PyUnicode_2BYTE_KIND, found,
                           arg, words, stop_unsafe);
    default:
        return each_word_4(self, PyUnicode_4BYTE_DATA(text), n, PyUnicode_4BYTE_KIND, found,
                           arg, words, stop_unsafe);
    }
}

static int
add_count(WordTable *self, Py_uhash_t hash, int kind, const void *data, Py_ssize_t start,
          Py_ssize_t end, void *arg)
{
    long *total = arg;
    if (*total < 0) {
        return 0; /* an unknown word was met: only the words are still counted */
    }
    Slot *slot = find(self, hash, kind, data, start, end);
    *total = slot->word == NULL ? UNKNOWN : *total + slot->count;
    return 0;
}

/* The token total of a 1-byte text (UNKNOWN, UNSAFE) and its word count: what each_word_1
 * with add_count gives, in one loop with the look-up inlined (a word of a 1-byte text is held
 * as a 1-byte str: Python keeps every str in its narrowest kind). */
static long
sizes_1(WordTable *self, const Py_UCS1 *chars, Py_ssize_t n, Py_ssize_t *words)
{
    const unsigned char *stop = self->stop1;
    long tokens = 0;
    Py_ssize_t i = 0, count = 0;
    while (i < n) {
        Py_UCS1 ch = chars[i];
        if (stop[ch]) {
            if (stop[ch] == 2) {
                return UNSAFE;
            }
            i++;
            continue;
        }
        Py_ssize_t start = i;
        Py_uhash_t h = FNV_OFFSET;
        do {
            h = (h ^ (Py_uhash_t)ch) * FNV_PRIME;
        } while (++i < n && !stop[ch = chars[i]]);
        count++;
        if (tokens < 0) {
            continue;
        }
        Py_ssize_t length = i - start, at = (Py_ssize_t)(h & (Py_uhash_t)self->mask);
        for (;;) {
            Slot *slot = &self->slots[at];
            PyObject *word = slot->word;
            if (word == NULL) {
                tokens = UNKNOWN;
                break;
            }
            if (slot->hash == h && PyUnicode_GET_LENGTH(word) == length
                && PyUnicode_KIND(word) == PyUnicode_1BYTE_KIND
                && memcmp(PyUnicode_1BYTE_DATA(word), chars + start, (size_t)length) == 0) {
                tokens += slot->count;
                break;
            }
            at = (at + 1) & self->mask;
        }
    }
    *words = count;
    return tokens;
}

static PyObject *
text_sizes(WordTable *self, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "texts must be str, not %.100s", Py_TYPE(text)->tp_name);
        return NULL;
    }
    long tokens = 0;
    Py_ssize_t words;
    if (PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND) {
        tokens = sizes_1(self, PyUnicode_1BYTE_DATA(text), PyUnicode_GET_LENGTH(text), &words);
    } else if (each_word(self, text, add_count, &tokens, &words, 1) == UNSAFE) {
        tokens = UNSAFE;
    }
    if (tokens == UNSAFE) {
        PyObject *split = PyUnicode_Split(text, NULL, -1);
        if (split == NULL) {
            return NULL;
        }
        words = PyList_GET_SIZE(split);
        Py_DECREF(split);
        tokens = UNSAFE;
    }
    return Py_BuildValue("(nnl)", PyUnicode_GET_LENGTH(text), words, tokens);
}

static PyObject *
WordTable_sizes(WordTable *self, PyObject *texts)
{
    PyObject *seq = PySequence_Fast(texts, "texts must be a sequence of str");
    if (seq == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *sizes = text_sizes(self, PySequence_Fast_GET_ITEM(seq, i));
        if (sizes == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, sizes);
    }
    Py_DECREF(seq);
    return out;
}

static int
note_missing(WordTable *self, Py_uhash_t hash, int kind, const void *data, Py_ssize_t start,
             Py_ssize_t end, void *arg)
{
    Slot *slot = find(self, hash, kind, data, start, end);
    if (slot->word != NULL) {
        return 0;
    }
    PyObject *word = PyUnicode_FromKindAndData(kind, (const char *)data + start * kind,
                                               end - start);
    if (word == NULL) {
        return 1;
    }
    int failed = PySet_Add((PyObject *)arg, word);
    Py_DECREF(word);
    return failed ? 1 : 0;
}

static PyObject *
WordTable_missing(WordTable *self, PyObject *texts)
{
    PyObject *seq = PySequence_Fast(texts, "texts must be a sequence of str");
    if (seq == NULL) {
        return NULL;
    }
    PyObject *found = PySet_New(NULL);
    for (Py_ssize_t i = 0; found != NULL && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *text = PySequence_Fast_GET_ITEM(seq, i);
        Py_ssize_t words;
        if (!PyUnicode_Check(text)) {
            PyErr_SetString(PyExc_TypeError, "texts must be str");
            Py_CLEAR(found);
        } else if (each_word(self, text, note_missing, found, &words, 0) == 1) {
            Py_CLEAR(found);
        }
    }
    Py_DECREF(seq);
    return found;
}

static PyObject *
WordTable_add(WordTable *self, PyObject *counts)
{
    if (!PyDict_Check(counts)) {
        PyErr_SetString(PyExc_TypeError, "add takes a dict of word -> token count");
        return NULL;
    }
    PyObject *word, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(counts, &pos, &word, &value)) {
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "words must be str");
            return NULL;
        }
        long count = PyLong_AsLong(value);
        if (count == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (count < 0) {
            PyErr_Format(PyExc_ValueError, "token count of %R must be >= 0, got %ld", word, count);
            return NULL;
        }
        if ((self->used + 1) * 2 > self->mask + 1 && grow(self) < 0) {
            return NULL;
        }
        int kind = PyUnicode_KIND(word);
        const void *data = PyUnicode_DATA(word);
        Py_ssize_t end = PyUnicode_GET_LENGTH(word);
        Py_uhash_t hash = span_hash(kind, data, 0, end);
        Slot *slot = find(self, hash, kind, data, 0, end);
        if (slot->word == NULL) {
            Py_INCREF(word);
            slot->word = word;
            slot->hash = hash;
            self->used++;
        }
        slot->count = count;
    }
    Py_RETURN_NONE;
}

static PyObject *
WordTable_clear(WordTable *self, PyObject *Py_UNUSED(ignored))
{
    release(self);
    if (allocate(self, 1024) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static Py_ssize_t
WordTable_len(WordTable *self)
{
    return self->used;
}

static int
WordTable_init(WordTable *self, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"unsafe", NULL};
    PyObject *unsafe;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "U", names, &unsafe)) {
        return -1;
    }
    Py_INCREF(unsafe);
    Py_XSETREF(self->unsafe, unsafe);
    for (int ch = 0; ch < 256; ch++) {
        int space = Py_UNICODE_ISSPACE((Py_UCS4)ch);
        self->stop1[ch] = !space ? 0 : !PLAIN_SPACE(ch) && is_unsafe(self, (Py_UCS4)ch) ? 2 : 1;
    }
    release(self);
    return allocate(self, 1024);
}

static void
WordTable_dealloc(WordTable *self)
{
    release(self);
    Py_XDECREF(self->unsafe);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef WordTable_methods[] = {
    {"sizes", (PyCFunction)WordTable_sizes, METH_O,
     "(chars, words, tokens) of each text; tokens is -1 when a word has no count yet and -2 "
     "when the text holds an unsafe char."},
    {"missing", (PyCFunction)WordTable_missing, METH_O,
     "The set of words of the texts that have no count yet."},
    {"add", (PyCFunction)WordTable_add, METH_O, "Keep the token count of each word of a dict."},
    {"clear", (PyCFunction)WordTable_clear, METH_NOARGS, "Forget every word."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods WordTable_as_sequence = {
    .sq_length = (lenfunc)WordTable_len,
};

static PyTypeObject WordTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chunklab.chunking._wordtable.WordTable",
    .tp_doc = PyDoc_STR("Token counts of words, looked up without a string per word."),
    .tp_basicsize = sizeof(WordTable),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)WordTable_init,
    .tp_dealloc = (destructor)WordTable_dealloc,
    .tp_methods = WordTable_methods,
    .tp_as_sequence = &WordTable_as_sequence,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_wordtable", "The word cache of chunklab.chunking.sizes, in C.", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__wordtable(void)
{
    if (PyType_Ready(&WordTableType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "WordTable", (PyObject *)&WordTableType) < 0 ||
        PyModule_AddIntConstant(m, "UNKNOWN", UNKNOWN) < 0 ||
        PyModule_AddIntConstant(m, "UNSAFE", UNSAFE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
