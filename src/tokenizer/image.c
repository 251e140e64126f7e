/* image.c - placeholder */
