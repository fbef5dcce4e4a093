/* A small streaming JSON writer: it tracks nesting so that commas and indentation come out
 * right, escapes strings, and prints doubles with %.17g so they read back bit-exact (NaN and
 * infinities as null). Each element of a top-level list is flushed as soon as it is complete, so
 * that a series' documents reach the reader one by one (docs/contract.md, Series). */
#ifndef PA_JSON_H
#define PA_JSON_H

#include <stdio.h>

#define PA_JSON_MAX_DEPTH 32

typedef struct {
    FILE *file;
    int depth;
    int count[PA_JSON_MAX_DEPTH]; /* values written so far at each level */
    char is_object[PA_JSON_MAX_DEPTH];
    int after_key;
} pa_json;

void pa_json_init(pa_json *json, FILE *file);
void pa_json_begin_object(pa_json *json);
void pa_json_end_object(pa_json *json);
void pa_json_begin_array(pa_json *json);
void pa_json_end_array(pa_json *json);
void pa_json_key(pa_json *json, const char *key);
void pa_json_string(pa_json *json, const char *text);
void pa_json_int(pa_json *json, long long value);
void pa_json_double(pa_json *json, double value);
void pa_json_bool(pa_json *json, int value);
void pa_json_null(pa_json *json);
/* A key and its value in one call. */
void pa_json_key_string(pa_json *json, const char *key, const char *text);
void pa_json_key_int(pa_json *json, const char *key, long long value);
void pa_json_key_double(pa_json *json, const char *key, double value);
void pa_json_key_bool(pa_json *json, const char *key, int value);
/* The same, null for what is not known: a NULL or empty text, a negative index. */
void pa_json_key_text_or_null(pa_json *json, const char *key, const char *text);
void pa_json_key_index_or_null(pa_json *json, const char *key, long long index);
void pa_json_double_array(pa_json *json, const double *values, int n);
/* Integers stay compact: a series of 10^5 nanosecond durations is ~0.7 MB, not 2 MB. */
void pa_json_int_array(pa_json *json, const long long *values, long n);
/* Ends the last top-level value with a newline and flushes; returns nonzero on a write error. */
int pa_json_finish(pa_json *json);

#endif
