/* main.c - placeholder until the server lands. */
#include <stdio.h>
int main(void) { puts("switchyard " SY_VERSION); return 0; }
