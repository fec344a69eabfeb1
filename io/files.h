/* cisolve: whether two paths name the same file: they reach the same device and inode (through
 * a symbolic or a hard link too) or, for a file not there yet, the same name in the same
 * resolved folder. And the HDF5 setting every program that writes files needs first. */
#ifndef CIS_FILES_H
#define CIS_FILES_H

/* Once, before any other HDF5 call of the program: a file whose close failed (a full disk, a file
 * size limit) must not crash the program when it exits (HDF5's own clean-up at exit would). */
void cis_io_init(void);
/* 1 when paths a and b name the same file (as above), else 0. */
int cis_files_same(const char *a, const char *b);

#endif
