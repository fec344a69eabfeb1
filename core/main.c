/* placeholder until the driver lands */
#include <stdio.h>
int main(void) { fprintf(stderr, "cisolve: driver not built yet\n"); return 1; }
