/* endpoint.c - placeholder */
