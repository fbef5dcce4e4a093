/* A main for the fuzz targets without libFuzzer: runs LLVMFuzzerTestOneInput once on each file
 * named on the command line (a corpus replayed). `make fuzz-replay` links it with GCC's
 * AddressSanitizer and UndefinedBehaviorSanitizer, so that the same inputs are checked under a
 * second compiler's instrumentation (docs/safety/native.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *file = fopen(argv[i], "rb");
        if (!file) {
            perror(argv[i]);
            return 2;
        }
        uint8_t *data = NULL;
        size_t size = 0, capacity = 0, got;
        do {
            if (size == capacity) {
                capacity = capacity ? 2 * capacity : 4096;
                data = pa_realloc(data, capacity, 1, "an input of the corpus");
            }
            got = fread(data + size, 1, capacity - size, file);
            size += got;
        } while (got > 0);
        fclose(file);
        LLVMFuzzerTestOneInput(data, size);
        free(data);
    }
    printf("replayed %d inputs\n", argc - 1);
    return 0;
}
