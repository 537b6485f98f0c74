/* arrow_sum.c — silt's Arrow C stream from a C program: runs a query over a
 * workspace (silt_query_arrow) and sums one integer or floating-point
 * column batch by batch, reading the Arrow buffers directly.
 *
 *   arrow_sum WORKSPACE QUERY COLUMN
 *   arrow_sum . 'SELECT * FROM "city-populations"' population
 *   -> rows=11 batches=1 nulls=0 sum=…
 *
 * Built with the project (build/examples/arrow_sum); outside it:
 *   cc arrow_sum.c $(pkg-config --cflags --libs silt)
 */
#include <silt.h>
#include <stdio.h>
#include <string.h>

/* Is row i of a (offset applied) valid? */
static int valid(const struct ArrowArray *a, int64_t i)
{
    const uint8_t *bits = a->n_buffers > 0 ? a->buffers[0] : NULL;
    int64_t j = a->offset + i;
    return !bits || (bits[j / 8] >> (j % 8)) & 1;
}

/* Adds the values of column array `a` of Arrow format `fmt` to *sum. */
static int add_column(const char *fmt, const struct ArrowArray *a, double *sum, int64_t *nulls)
{
    for (int64_t i = 0; i < a->length; i++) {
        if (!valid(a, i)) {
            (*nulls)++;
            continue;
        }
        const void *v = a->buffers[1];
        int64_t j = a->offset + i;
        switch (fmt[0]) {
        case 'c': *sum += ((const int8_t *)v)[j]; break;
        case 'C': *sum += ((const uint8_t *)v)[j]; break;
        case 's': *sum += ((const int16_t *)v)[j]; break;
        case 'S': *sum += ((const uint16_t *)v)[j]; break;
        case 'i': *sum += ((const int32_t *)v)[j]; break;
        case 'I': *sum += ((const uint32_t *)v)[j]; break;
        case 'l': *sum += (double)((const int64_t *)v)[j]; break;
        case 'L': *sum += (double)((const uint64_t *)v)[j]; break;
        case 'f': *sum += ((const float *)v)[j]; break;
        case 'g': *sum += ((const double *)v)[j]; break;
        default:
            fprintf(stderr, "arrow_sum: column has Arrow format '%s', not a number\n", fmt);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: arrow_sum WORKSPACE QUERY COLUMN\n");
        return 2;
    }
    silt_workspace *ws = NULL;
    struct ArrowArrayStream st;
    if (silt_workspace_open(&ws, argv[1]) < 0 || silt_query_arrow(&st, ws, argv[2], NULL) < 0) {
        fprintf(stderr, "arrow_sum: %s\n", silt_error_last());
        silt_workspace_free(ws);
        return 1;
    }
    struct ArrowSchema schema;
    int rc = st.get_schema(&st, &schema);
    int64_t col = -1;
    for (int64_t i = 0; rc == 0 && i < schema.n_children; i++)
        if (strcmp(schema.children[i]->name, argv[3]) == 0)
            col = i;
    if (rc == 0 && col < 0) {
        fprintf(stderr, "arrow_sum: no column '%s'\n", argv[3]);
        rc = -1;
    }
    double sum = 0;
    int64_t rows = 0, batches = 0, nulls = 0;
    while (rc == 0) {
        struct ArrowArray batch;
        if ((rc = st.get_next(&st, &batch)) != 0) {
            fprintf(stderr, "arrow_sum: %s\n", st.get_last_error(&st));
            break;
        }
        if (!batch.release) /* the end of the stream */
            break;
        rows += batch.length;
        batches++;
        rc = add_column(schema.children[col]->format, batch.children[col], &sum, &nulls);
        batch.release(&batch);
    }
    if (schema.release)
        schema.release(&schema);
    st.release(&st);
    silt_workspace_free(ws);
    if (rc)
        return 1;
    printf("rows=%lld batches=%lld nulls=%lld sum=%.17g\n", (long long)rows, (long long)batches, (long long)nulls, sum);
    return 0;
}
