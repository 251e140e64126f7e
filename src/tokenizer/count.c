/* count.c - placeholder */
