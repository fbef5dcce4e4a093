/* The library's calls (sites_lib.c). */
void sites_lib_send(int peer, int times);
void sites_lib_receive(int peer, int times);
