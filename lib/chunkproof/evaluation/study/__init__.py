"""The study: the same grid on many documentation sites with written questions, each site's
paired effects pooled by random effects, and the result shipped as the verdict's prior."""
