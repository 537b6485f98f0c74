/* avro_gen.c — writes the rows of bench_avro.sh as an Avro object container
 * file with Apache Avro C:
 *   avro_gen OUT FIRST COUNT CODEC
 * rows i = FIRST .. FIRST+COUNT-1 of {id: long = i, cat: int = i % 100,
 * name: string = "name-<i % 1000>", score: double = (i % 10007) / 8.0}. */
#include <avro.h>
#include <stdio.h>
#include <stdlib.h>

static const char SCHEMA[] = "{\"type\":\"record\",\"name\":\"Bench\",\"fields\":["
                             "{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"cat\",\"type\":\"int\"},"
                             "{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"score\",\"type\":\"double\"}]}";

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: avro_gen OUT FIRST COUNT CODEC\n");
        return 2;
    }
    long long first = atoll(argv[2]), count = atoll(argv[3]);
    avro_schema_t s;
    avro_file_writer_t w;
    if (avro_schema_from_json_length(SCHEMA, sizeof SCHEMA - 1, &s) ||
        avro_file_writer_create_with_codec(argv[1], s, &w, argv[4], 1 << 20)) {
        fprintf(stderr, "avro_gen: %s\n", avro_strerror());
        return 1;
    }
    avro_value_iface_t *iface = avro_generic_class_from_schema(s);
    avro_value_t rec, f;
    avro_generic_value_new(iface, &rec);
    char name[32];
    for (long long i = first; i < first + count; i++) {
        snprintf(name, sizeof name, "name-%lld", i % 1000);
        avro_value_get_by_index(&rec, 0, &f, NULL);
        avro_value_set_long(&f, i);
        avro_value_get_by_index(&rec, 1, &f, NULL);
        avro_value_set_int(&f, (int32_t)(i % 100));
        avro_value_get_by_index(&rec, 2, &f, NULL);
        avro_value_set_string(&f, name);
        avro_value_get_by_index(&rec, 3, &f, NULL);
        avro_value_set_double(&f, (double)(i % 10007) / 8.0);
        if (avro_file_writer_append_value(w, &rec)) {
            fprintf(stderr, "avro_gen: %s\n", avro_strerror());
            return 1;
        }
    }
    avro_value_decref(&rec);
    avro_value_iface_decref(iface);
    avro_file_writer_close(w);
    avro_schema_decref(s);
    return 0;
}
