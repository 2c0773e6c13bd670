"""Stage 1, the document: a folder read into Documents, each owning its parsed blocks, its
heading detectors' findings and its heading stack."""
