/* The call-site probe the test programs call from known lines (tests/test_call_site_symbols.py). */
#ifndef CALL_SITES_PROBE_H
#define CALL_SITES_PROBE_H
#ifdef __cplusplus
extern "C" {
#endif
int probe(const char *tag);
int probe_at(const char *tag, void *return_address);
void probe_report(void);
#ifdef __cplusplus
}
#endif
#endif
