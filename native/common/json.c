#include "json.h"

#include <math.h>
#include <stdlib.h>

void pa_json_init(pa_json *json, FILE *file)
{
    json->file = file;
    json->depth = 0;
    json->count[0] = 0;
    json->is_object[0] = 0;
    json->after_key = 0;
}

static void indent(pa_json *json)
{
    fputc('\n', json->file);
    for (int i = 0; i < json->depth; i++)
        fputs("  ", json->file);
}

/* Separator before a value: objects put each key on its own line, arrays stay on one line. */
static void before_value(pa_json *json)
{
    if (json->after_key) {
        json->after_key = 0;
        return;
    }
    if (json->count[json->depth]++ > 0)
        fputs(json->depth > 0 ? ", " : "\n", json->file);
}

static void begin(pa_json *json, char open, int is_object)
{
    before_value(json);
    fputc(open, json->file);
    if (++json->depth >= PA_JSON_MAX_DEPTH)
        abort();
    json->count[json->depth] = 0;
    json->is_object[json->depth] = (char)is_object;
}

static void end(pa_json *json, char close)
{
    int had_keys = json->is_object[json->depth] && json->count[json->depth] > 0;
    json->depth--;
    if (had_keys)
        indent(json);
    fputc(close, json->file);
    /* An element of a top-level list (a series point's document) goes out as soon as it is
     * whole: the reader stores it then, and a launch that dies later keeps it (contract.md). */
    if (json->depth == 1 && !json->is_object[1])
        fflush(json->file);
}

void pa_json_begin_object(pa_json *json) { begin(json, '{', 1); }
void pa_json_end_object(pa_json *json) { end(json, '}'); }
void pa_json_begin_array(pa_json *json) { begin(json, '[', 0); }
void pa_json_end_array(pa_json *json) { end(json, ']'); }

static void write_string(FILE *file, const char *text)
{
    fputc('"', file);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", file);
            break;
        case '\\':
            fputs("\\\\", file);
            break;
        case '\n':
            fputs("\\n", file);
            break;
        case '\r':
            fputs("\\r", file);
            break;
        case '\t':
            fputs("\\t", file);
            break;
        default:
            if (*p < 0x20)
                fprintf(file, "\\u%04x", *p);
            else
                fputc(*p, file);
        }
    }
    fputc('"', file);
}

void pa_json_key(pa_json *json, const char *key)
{
    if (json->count[json->depth]++ > 0)
        fputc(',', json->file);
    indent(json);
    write_string(json->file, key);
    fputs(": ", json->file);
    json->after_key = 1;
}

void pa_json_string(pa_json *json, const char *text)
{
    before_value(json);
    write_string(json->file, text);
}

void pa_json_int(pa_json *json, long long value)
{
    before_value(json);
    fprintf(json->file, "%lld", value);
}

void pa_json_double(pa_json *json, double value)
{
    before_value(json);
    if (isfinite(value))
        fprintf(json->file, "%.17g", value);
    else
        fputs("null", json->file);
}

void pa_json_bool(pa_json *json, int value)
{
    before_value(json);
    fputs(value ? "true" : "false", json->file);
}

void pa_json_null(pa_json *json)
{
    before_value(json);
    fputs("null", json->file);
}

void pa_json_key_string(pa_json *json, const char *key, const char *text)
{
    pa_json_key(json, key);
    pa_json_string(json, text);
}

void pa_json_key_int(pa_json *json, const char *key, long long value)
{
    pa_json_key(json, key);
    pa_json_int(json, value);
}

void pa_json_key_double(pa_json *json, const char *key, double value)
{
    pa_json_key(json, key);
    pa_json_double(json, value);
}

void pa_json_key_bool(pa_json *json, const char *key, int value)
{
    pa_json_key(json, key);
    pa_json_bool(json, value);
}

void pa_json_key_text_or_null(pa_json *json, const char *key, const char *text)
{
    pa_json_key(json, key);
    if (text != NULL && text[0] != '\0')
        pa_json_string(json, text);
    else
        pa_json_null(json);
}

void pa_json_key_index_or_null(pa_json *json, const char *key, long long index)
{
    pa_json_key(json, key);
    if (index >= 0)
        pa_json_int(json, index);
    else
        pa_json_null(json);
}

void pa_json_double_array(pa_json *json, const double *values, int n)
{
    pa_json_begin_array(json);
    for (int i = 0; i < n; i++)
        pa_json_double(json, values[i]);
    pa_json_end_array(json);
}

void pa_json_int_array(pa_json *json, const long long *values, long n)
{
    pa_json_begin_array(json);
    for (long i = 0; i < n; i++)
        pa_json_int(json, values[i]);
    pa_json_end_array(json);
}

int pa_json_finish(pa_json *json)
{
    fputc('\n', json->file);
    return fflush(json->file) != 0 || ferror(json->file);
}
