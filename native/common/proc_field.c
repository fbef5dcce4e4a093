#include "proc_field.h"

#include <stdio.h>
#include <string.h>

int pa_proc_field(const char *path, const char *prefix, char *out, size_t size)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    char line[512];
    int found = 0;
    size_t length = strlen(prefix);
    while (!found && fgets(line, sizeof line, file))
        if (strncmp(line, prefix, length) == 0) {
            const char *value = line + length;
            while (*value == ' ' || *value == '\t' || *value == ':')
                value++;
            snprintf(out, size, "%s", value);
            out[strcspn(out, "\n")] = '\0';
            found = 1;
        }
    fclose(file);
    return found;
}
