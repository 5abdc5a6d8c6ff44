/* SPDX-License-Identifier: MIT */
/* The program of corpus.c built as a shared library (-DCORPUS_LIB): its
 * static functions are then in libcorpus.so. */
int corpus_run(int argc, char **argv);

int main(int argc, char **argv)
{
	return corpus_run(argc, argv);
}
