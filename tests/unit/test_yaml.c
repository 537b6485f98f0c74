/* test_yaml.c — YAML/JSON codecs of the ODF metadata types. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "odf/json.h"
#include "odf/odf_types.h"
#include "odf/yaml.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"

/* ---------------------------------------------------------------- helpers */

/* Parses a manifest and re-emits it; asserts byte-identical output. */
static void roundtrip_manifest(const char *text, const char *kind)
{
    silt_arena *a = silt_arena_new();
    assert_non_null(a);
    void *obj = NULL;
    int version = 0;
    int rc = odf_yaml_parse_manifest(a, text, strlen(text), "test.yaml", kind, &version, &obj);
    if (rc != 0)
        fail_msg("parse failed: %s", silt_error_last());
    assert_non_null(obj);
    const odf_table_desc *d = !strcmp(kind, "MetadataBlock") ? &odf_desc_MetadataBlock : &odf_desc_DatasetSnapshot;
    silt_buf out = SILT_BUF_INIT;
    rc = odf_yaml_emit_manifest(&out, kind, version, d, obj);
    if (rc != 0)
        fail_msg("emit failed: %s", silt_error_last());
    if (strcmp(out.data, text) != 0) {
        size_t i = 0, line = 1, ls = 0;
        while (text[i] && text[i] == out.data[i]) {
            if (text[i] == '\n') {
                line++;
                ls = i + 1;
            }
            i++;
        }
        fail_msg("round trip differs at line %zu:\nexpected: %.60s\n     got: %.60s", line, text + ls,
                 out.data + ls);
    }
    silt_buf_free(&out);
    silt_arena_free(a);
}

/* Parses a manifest expecting failure; asserts the exact error message. */
static void expect_error(const char *text, const char *kind, const char *msg)
{
    silt_arena *a = silt_arena_new();
    assert_non_null(a);
    void *obj = NULL;
    int rc = odf_yaml_parse_manifest(a, text, strlen(text), "manifest.yaml", kind, NULL, &obj);
    if (rc != SILT_EINVAL)
        fail_msg("expected EINVAL (%s), got %d (%s)", msg, rc, silt_error_last());
    if (strcmp(silt_error_last(), msg) != 0)
        fail_msg("wrong message.\nexpected: %s\n     got: %s", msg, silt_error_last());
    silt_arena_free(a);
}

static void *parse_ok(silt_arena *a, const char *text, const char *kind)
{
    void *obj = NULL;
    int rc = odf_yaml_parse_manifest(a, text, strlen(text), "test.yaml", kind, NULL, &obj);
    if (rc != 0)
        fail_msg("parse failed: %s", silt_error_last());
    return obj;
}

#define BLOCK_HEAD                                                                                   \
    "kind: MetadataBlock\n"                                                                          \
    "version: 3\n"                                                                                   \
    "content:\n"                                                                                     \
    "  systemTime: 2020-01-01T12:00:00Z\n"                                                           \
    "  prevBlockHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\n" \
    "  sequenceNumber: 117\n"

/* ------------------------------------------------------------ golden files */

static void test_golden_files_roundtrip(void **state)
{
    (void)state;
    static const char *const files[] = {"odf-golden/case0.yaml", "odf-golden/case3.yaml",
                                        "odf-golden/case4.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t len;
        char *text = tu_read_file(tu_fixture(files[i]), &len);
        assert_non_null(text);
        roundtrip_manifest(text, "MetadataBlock");
        free(text);
    }
}

static void test_golden_case3_values(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_read_file(tu_fixture("odf-golden/case3.yaml"), &len);
    assert_non_null(text);
    silt_arena *a = silt_arena_new();
    odf_MetadataBlock *b = parse_ok(a, text, "MetadataBlock");
    assert_int_equal(b->sequence_number, 117);
    assert_int_equal(b->system_time.sec, 1577880000);
    assert_int_equal(b->prev_block_hash.len, 34);
    assert_int_equal(b->event.type, ODF_MetadataEvent_AddData);
    odf_AddData *ad = b->event.value;
    assert_true(ad->has_prev_offset);
    assert_int_equal(ad->prev_offset, 9);
    assert_int_equal(ad->new_data->offset_interval->start, 10);
    assert_int_equal(ad->new_data->offset_interval->end, 99);
    assert_int_equal(ad->new_data->size, 100);
    assert_true(ad->has_new_watermark);
    assert_null(ad->new_checkpoint);
    silt_arena_free(a);
    free(text);
}

/* Reference examples (ODF reference implementation's serde tests). */
static const char SNAPSHOT_ROOT[] =
    "kind: DatasetSnapshot\n"
    "version: 1\n"
    "content:\n"
    "  name: kamu.test\n"
    "  kind: Root\n"
    "  metadata:\n"
    "  - kind: SetPollingSource\n"
    "    fetch:\n"
    "      kind: Url\n"
    "      url: ftp://kamu.dev/test.zip\n"
    "      cache:\n"
    "        kind: Forever\n"
    "    prepare:\n"
    "    - kind: Decompress\n"
    "      format: Zip\n"
    "      subPath: data_*.csv\n"
    "    read:\n"
    "      kind: Csv\n"
    "      header: true\n"
    "    preprocess:\n"
    "      kind: Sql\n"
    "      engine: spark\n"
    "      query: SELECT * FROM input\n"
    "    merge:\n"
    "      kind: Snapshot\n"
    "      primaryKey:\n"
    "      - id\n";

static const char SNAPSHOT_DERIV[] =
    "kind: DatasetSnapshot\n"
    "version: 1\n"
    "content:\n"
    "  name: a/com.naturalearthdata.admin0\n"
    "  kind: Derivative\n"
    "  metadata:\n"
    "  - kind: SetTransform\n"
    "    inputs:\n"
    "    - datasetRef: b/com.naturalearthdata.10m.admin0\n"
    "    - datasetRef: c/com.naturalearthdata.50m.admin0\n"
    "    transform:\n"
    "      kind: Sql\n"
    "      engine: spark\n"
    "      query: SOME_SQL\n";

static const char BLOCK_EXEC[] =
    "kind: MetadataBlock\n"
    "version: 3\n"
    "content:\n"
    "  systemTime: 2020-01-01T12:00:00Z\n"
    "  prevBlockHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\n"
    "  sequenceNumber: 127\n"
    "  event:\n"
    "    kind: ExecuteTransform\n"
    "    queryInputs:\n"
    "    - datasetId: did:odf:fed01816ef0a9abe93aba816ef0a9abe93aba90e6065747170300c0d3d30c2cd8d7a4\n"
    "      prevBlockHash: f162080084bf2fba02475726feb2cab2d8215eab14bc6bdd8bfb2c8151257032ecd8b\n"
    "      newBlockHash: f1620b039179a8a4ce2c252aa6f2f25798251c19b75fc1508d9d511a191e0487d64a7\n"
    "      prevOffset: 9\n"
    "      newOffset: 20\n"
    "    - datasetId: did:odf:fed01826ef0a9abea3a3a826ef0a9abea3a3a90e6065747270300c1d3b30a2cd9d724\n"
    "      prevBlockHash: f162080084bf2fba02475726feb2cab2d8215eab14bc6bdd8bfb2c8151257032ecd8b\n"
    "      newBlockHash: f1620b039179a8a4ce2c252aa6f2f25798251c19b75fc1508d9d511a191e0487d64a7\n"
    "    prevCheckpoint: f1620894b355f91b194f31c1116dcec200b68d5cfd90a3df19032829fa643bc711fcb\n"
    "    prevOffset: 9\n"
    "    newData:\n"
    "      logicalHash: f162076d3bc41c9f588f7fcd0d5bf4718f8f84b1c41b20882703100b9eb9413807c01\n"
    "      physicalHash: f1620cceefd7e0545bcf8b6d19f3b5750c8a3ee8350418877bc6fb12e32de28137355\n"
    "      offsetInterval:\n"
    "        start: 10\n"
    "        end: 19\n"
    "      size: 10\n"
    "    newWatermark: 2020-01-01T12:00:00Z\n";

static const char BLOCK_SCHEMA[] =
    "kind: MetadataBlock\n"
    "version: 3\n"
    "content:\n"
    "  systemTime: 2020-01-01T12:00:00Z\n"
    "  prevBlockHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\n"
    "  sequenceNumber: 123\n"
    "  event:\n"
    "    kind: SetDataSchema\n"
    "    schema:\n"
    "      fields:\n"
    "      - name: city\n"
    "        type:\n"
    "          kind: String\n"
    "        extra:\n"
    "          arrow.apache.org/bufferEncoding:\n"
    "            kind: View\n"
    "            offsetBitWidth: 32\n"
    "      - name: population\n"
    "        type:\n"
    "          kind: UInt64\n"
    "      - name: census\n"
    "        type:\n"
    "          kind: Option\n"
    "          inner:\n"
    "            kind: String\n"
    "        extra:\n"
    "          opendatafabric.org/type:\n"
    "            kind: ObjectLink\n"
    "            linkType:\n"
    "              kind: Multihash\n"
    "      - name: links\n"
    "        type:\n"
    "          kind: List\n"
    "          itemType:\n"
    "            kind: String\n"
    "      extra:\n"
    "        kamu.dev/archetype: Collection\n";

static void test_reference_examples_roundtrip(void **state)
{
    (void)state;
    roundtrip_manifest(SNAPSHOT_ROOT, "DatasetSnapshot");
    roundtrip_manifest(SNAPSHOT_DERIV, "DatasetSnapshot");
    roundtrip_manifest(BLOCK_EXEC, "MetadataBlock");
    roundtrip_manifest(BLOCK_SCHEMA, "MetadataBlock");
}

static void test_extra_attributes_json(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    odf_MetadataBlock *b = parse_ok(a, BLOCK_SCHEMA, "MetadataBlock");
    odf_SetDataSchema *s = b->event.value;
    assert_int_equal(b->event.type, ODF_MetadataEvent_SetDataSchema);
    assert_int_equal(s->schema->fields.n, 4);
    odf_DataField *city = s->schema->fields.items[0];
    assert_string_equal(city->extra->entries,
                        "{\"arrow.apache.org/bufferEncoding\":{\"kind\":\"View\",\"offsetBitWidth\":32}}");
    assert_string_equal(s->schema->extra->entries, "{\"kamu.dev/archetype\":\"Collection\"}");

    /* keys sorted, YAML scalars resolved per the core schema */
    const char *t = BLOCK_HEAD "  event:\n"
                               "    kind: AddData\n"
                               "    extra:\n"
                               "      z.org/b: {numObjectsNaive: 10, sizeNaive: 100}\n"
                               "      a.org/x: [1, -2, 1.5, 0x10, true, null, ~, '3', \"q\\n\", 0123, 1e3]\n"
                               "      m.org/s: \"tab\\there\"\n";
    odf_MetadataBlock *b2 = parse_ok(a, t, "MetadataBlock");
    odf_AddData *ad = b2->event.value;
    assert_string_equal(ad->extra->entries,
                        "{\"a.org/x\":[1,-2,1.5,16,true,null,null,\"3\",\"q\\n\",\"0123\",1000.0],"
                        "\"m.org/s\":\"tab\\there\","
                        "\"z.org/b\":{\"numObjectsNaive\":10,\"sizeNaive\":100}}");
    silt_buf out = SILT_BUF_INIT;
    assert_int_equal(odf_yaml_emit_manifest(&out, "MetadataBlock", 3, &odf_desc_MetadataBlock, b2), 0);
    assert_string_equal(out.data, BLOCK_HEAD "  event:\n"
                                             "    kind: AddData\n"
                                             "    extra:\n"
                                             "      a.org/x:\n"
                                             "      - 1\n"
                                             "      - -2\n"
                                             "      - 1.5\n"
                                             "      - 16\n"
                                             "      - true\n"
                                             "      - null\n"
                                             "      - null\n"
                                             "      - '3'\n"
                                             "      - |\n"
                                             "        q\n"
                                             "      - '0123'\n"
                                             "      - 1000.0\n"
                                             "      m.org/s: \"tab\\there\"\n"
                                             "      z.org/b:\n"
                                             "        numObjectsNaive: 10\n"
                                             "        sizeNaive: 100\n");
    silt_buf_free(&out);
    silt_arena_free(a);
}

/* ------------------------------------------------- snapshots, many events */

static const char SNAPSHOT_MANY[] =
    "kind: DatasetSnapshot\n"
    "version: 1\n"
    "content:\n"
    "  name: org.example.many\n"
    "  kind: Root\n"
    "  metadata:\n"
    "  - kind: SetPollingSource\n"
    "    fetch:\n"
    "      kind: Url\n"
    "      url: https://example.org/data.csv\n"
    "      eventTime:\n"
    "        kind: FromPath\n"
    "        pattern: data-(\\d+)\\.csv\n"
    "        timestampFormat: '%Y'\n"
    "      cache:\n"
    "        kind: Forever\n"
    "      headers:\n"
    "      - name: Authorization\n"
    "        value: Bearer ${{ env.TOKEN }}\n"
    "    prepare:\n"
    "    - kind: Pipe\n"
    "      command:\n"
    "      - jq\n"
    "      - -c\n"
    "      - .[]\n"
    "    - kind: Decompress\n"
    "      format: Gzip\n"
    "    read:\n"
    "      kind: Csv\n"
    "      ddlSchema:\n"
    "      - 'id: BIGINT'\n"
    "      separator: ;\n"
    "      encoding: utf-8\n"
    "      quote: '\"'\n"
    "      escape: \\\n"
    "      header: true\n"
    "      inferSchema: false\n"
    "      nullValue: ''\n"
    "      dateFormat: yyyy-MM-dd\n"
    "      timestampFormat: yyyy-MM-dd HH:mm:ss\n"
    "      schema:\n"
    "        fields:\n"
    "        - name: id\n"
    "          type:\n"
    "            kind: Int64\n"
    "    preprocess:\n"
    "      kind: Sql\n"
    "      engine: datafusion\n"
    "      queries:\n"
    "      - alias: a\n"
    "        query: SELECT 1\n"
    "      - query: |\n"
    "          SELECT *\n"
    "          FROM a\n"
    "      temporalTables:\n"
    "      - name: t\n"
    "        primaryKey:\n"
    "        - id\n"
    "    merge:\n"
    "      kind: Ledger\n"
    "      primaryKey:\n"
    "      - id\n"
    "  - kind: AddPushSource\n"
    "    sourceName: push\n"
    "    read:\n"
    "      kind: NdJson\n"
    "      dateFormat: '%Y-%m-%d'\n"
    "      encoding: utf-8\n"
    "    merge:\n"
    "      kind: Append\n"
    "  - kind: SetVocab\n"
    "    offsetColumn: offset\n"
    "    operationTypeColumn: op\n"
    "    systemTimeColumn: system_time\n"
    "    eventTimeColumn: date\n"
    "  - kind: SetInfo\n"
    "    description: 'Population: by city'\n"
    "    keywords:\n"
    "    - Population\n"
    "    - yes\n"
    "    - '123'\n"
    "    - '1.5'\n"
    "    - 'null'\n"
    "    - '~'\n"
    "    - ''\n"
    "    - ' padded'\n"
    "    - '- dash'\n"
    "    - '# hash'\n"
    "    - 'a #b'\n"
    "    - '@at'\n"
    "    - Zürich\n"
    "  - kind: SetLicense\n"
    "    shortName: CC BY 4.0\n"
    "    name: Creative Commons Attribution 4.0 International\n"
    "    spdxId: CC-BY-4.0\n"
    "    websiteUrl: https://creativecommons.org/licenses/by/4.0/\n"
    "  - kind: SetAttachments\n"
    "    attachments:\n"
    "      kind: Embedded\n"
    "      items:\n"
    "      - path: README.md\n"
    "        content: |\n"
    "          # Title\n"
    "\n"
    "          Some text.\n"
    "  - kind: SetDataSchema\n"
    "    schema:\n"
    "      fields:\n"
    "      - name: a\n"
    "        type:\n"
    "          kind: Option\n"
    "          inner:\n"
    "            kind: List\n"
    "            itemType:\n"
    "              kind: Struct\n"
    "              fields:\n"
    "              - name: x\n"
    "                type:\n"
    "                  kind: Decimal\n"
    "                  precision: 10\n"
    "                  scale: -2\n"
    "              - name: m\n"
    "                type:\n"
    "                  kind: Map\n"
    "                  keyType:\n"
    "                    kind: String\n"
    "                  valueType:\n"
    "                    kind: Binary\n"
    "                    fixedLength: 16\n"
    "                  keysSorted: true\n"
    "            fixedLength: 3\n"
    "      - name: ts\n"
    "        type:\n"
    "          kind: Timestamp\n"
    "          unit: Millisecond\n"
    "          timezone: UTC\n"
    "      - name: t\n"
    "        type:\n"
    "          kind: Time\n"
    "          unit: Nanosecond\n"
    "      - name: d\n"
    "        type:\n"
    "          kind: Duration\n"
    "          unit: Second\n"
    "      - name: f\n"
    "        type:\n"
    "          kind: Float64\n"
    "      - name: b\n"
    "        type:\n"
    "          kind: Bool\n"
    "      - name: dt\n"
    "        type:\n"
    "          kind: Date\n"
    "      - name: n\n"
    "        type:\n"
    "          kind: 'Null'\n";

static void test_snapshot_many_events(void **state)
{
    (void)state;
    roundtrip_manifest(SNAPSHOT_MANY, "DatasetSnapshot");

    silt_arena *a = silt_arena_new();
    odf_DatasetSnapshot *s = parse_ok(a, SNAPSHOT_MANY, "DatasetSnapshot");
    assert_string_equal(s->name, "org.example.many");
    assert_int_equal(s->kind, ODF_DatasetKind_Root);
    assert_int_equal(s->metadata.n, 7);
    assert_int_equal(s->metadata.items[0].type, ODF_MetadataEvent_SetPollingSource);
    odf_SetPollingSource *sp = s->metadata.items[0].value;
    assert_int_equal(sp->read.type, ODF_ReadStep_Csv);
    odf_ReadStepCsv *csv = sp->read.value;
    assert_string_equal(csv->separator, ";");
    assert_string_equal(csv->quote, "\"");
    assert_string_equal(csv->escape, "\\");
    assert_string_equal(csv->null_value, "");
    assert_true(csv->has_header && csv->header);
    assert_true(csv->has_infer_schema && !csv->infer_schema);
    assert_int_equal(sp->prepare.n, 2);
    assert_int_equal(s->metadata.items[6].type, ODF_MetadataEvent_SetDataSchema);
    odf_SetDataSchema *sds = s->metadata.items[6].value;
    odf_DataField *a0 = sds->schema->fields.items[0];
    assert_int_equal(a0->type.type, ODF_DataType_Option);
    odf_DataTypeOption *opt = a0->type.value;
    assert_int_equal(opt->inner.type, ODF_DataType_List);
    odf_DataTypeList *lst = opt->inner.value;
    assert_true(lst->has_fixed_length);
    assert_int_equal(lst->fixed_length, 3);
    assert_int_equal(lst->item_type.type, ODF_DataType_Struct);
    odf_DataTypeStruct *st = lst->item_type.value;
    odf_DataField *x = st->fields.items[0];
    odf_DataTypeDecimal *dec = x->type.value;
    assert_int_equal(dec->precision, 10);
    assert_int_equal(dec->scale, -2);
    odf_DataField *ts = sds->schema->fields.items[1];
    odf_DataTypeTimestamp *tst = ts->type.value;
    assert_true(tst->has_unit);
    assert_int_equal(tst->unit, ODF_TimeUnit_Millisecond);
    assert_string_equal(tst->timezone, "UTC");
    silt_arena_free(a);
}

static void test_all_read_steps(void **state)
{
    (void)state;
    const char *t = "kind: DatasetSnapshot\n"
                    "version: 1\n"
                    "content:\n"
                    "  name: x\n"
                    "  kind: Root\n"
                    "  metadata:\n"
                    "  - kind: AddPushSource\n"
                    "    sourceName: a\n"
                    "    read:\n"
                    "      kind: GeoJson\n"
                    "      ddlSchema:\n"
                    "      - 'g: STRING'\n"
                    "    merge:\n"
                    "      kind: Append\n"
                    "  - kind: AddPushSource\n"
                    "    sourceName: b\n"
                    "    read:\n"
                    "      kind: EsriShapefile\n"
                    "      subPath: '*.shp'\n"
                    "    merge:\n"
                    "      kind: ChangelogStream\n"
                    "      primaryKey:\n"
                    "      - id\n"
                    "  - kind: AddPushSource\n"
                    "    sourceName: c\n"
                    "    read:\n"
                    "      kind: Parquet\n"
                    "    merge:\n"
                    "      kind: UpsertStream\n"
                    "      primaryKey:\n"
                    "      - id\n"
                    "  - kind: AddPushSource\n"
                    "    sourceName: d\n"
                    "    read:\n"
                    "      kind: Json\n"
                    "      subPath: records\n"
                    "      dateFormat: '%Y'\n"
                    "      encoding: utf-8\n"
                    "      timestampFormat: '%s'\n"
                    "    merge:\n"
                    "      kind: Snapshot\n"
                    "      primaryKey:\n"
                    "      - id\n"
                    "      compareColumns:\n"
                    "      - v\n"
                    "  - kind: AddPushSource\n"
                    "    sourceName: e\n"
                    "    read:\n"
                    "      kind: NdGeoJson\n"
                    "    merge:\n"
                    "      kind: Append\n"
                    "  - kind: SetPollingSource\n"
                    "    fetch:\n"
                    "      kind: FilesGlob\n"
                    "      path: /data/*.json\n"
                    "      eventTime:\n"
                    "        kind: FromSystemTime\n"
                    "      order: ByEventTime\n"
                    "    read:\n"
                    "      kind: NdJson\n"
                    "    merge:\n"
                    "      kind: Append\n"
                    "  - kind: SetPollingSource\n"
                    "    fetch:\n"
                    "      kind: Container\n"
                    "      image: ghcr.io/x/y:1\n"
                    "      command:\n"
                    "      - run\n"
                    "      args:\n"
                    "      - --since\n"
                    "      - '2020'\n"
                    "      env:\n"
                    "      - name: A\n"
                    "        value: b\n"
                    "      - name: B\n"
                    "    read:\n"
                    "      kind: Parquet\n"
                    "    merge:\n"
                    "      kind: Append\n"
                    "  - kind: SetPollingSource\n"
                    "    fetch:\n"
                    "      kind: Mqtt\n"
                    "      host: localhost\n"
                    "      port: 1883\n"
                    "      username: u\n"
                    "      password: p\n"
                    "      topics:\n"
                    "      - path: a/b\n"
                    "        qos: AtLeastOnce\n"
                    "    read:\n"
                    "      kind: Json\n"
                    "    merge:\n"
                    "      kind: Append\n"
                    "  - kind: SetPollingSource\n"
                    "    fetch:\n"
                    "      kind: EthereumLogs\n"
                    "      chainId: 1\n"
                    "      nodeUrl: https://node\n"
                    "      filter: address = 0x1\n"
                    "      signature: Transfer(address,address,uint256)\n"
                    "    read:\n"
                    "      kind: Parquet\n"
                    "    merge:\n"
                    "      kind: Append\n"
                    "  - kind: DisablePushSource\n"
                    "    sourceName: a\n"
                    "  - kind: DisablePollingSource\n";
    roundtrip_manifest(t, "DatasetSnapshot");
}

static void test_block_events_roundtrip(void **state)
{
    (void)state;
    roundtrip_manifest(BLOCK_HEAD "  event:\n"
                                  "    kind: Seed\n"
                                  "    datasetId: did:odf:fed01816ef0a9abe93aba816ef0a9abe93aba90e6065747170300c0d3d30c2cd8d7a4\n"
                                  "    datasetKind: Derivative\n",
                       "MetadataBlock");
    roundtrip_manifest(BLOCK_HEAD "  event:\n"
                                  "    kind: AddData\n"
                                  "    newCheckpoint:\n"
                                  "      physicalHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\n"
                                  "      size: 0\n"
                                  "    newWatermark: 2021-03-04T05:06:07.123456Z\n"
                                  "    newSourceState:\n"
                                  "      sourceName: src\n"
                                  "      kind: odf/etag\n"
                                  "      value: '\"abc\"'\n"
                                  "    extra:\n"
                                  "      opendatafabric.org/linkedObjects:\n"
                                  "        numObjectsNaive: 10\n"
                                  "        sizeNaive: 100\n",
                       "MetadataBlock");
    roundtrip_manifest("kind: MetadataBlock\n"
                       "version: 3\n"
                       "content:\n"
                       "  systemTime: 2020-01-01T12:00:00.500Z\n"
                       "  sequenceNumber: 0\n"
                       "  event:\n"
                       "    kind: SetDataSchema\n"
                       "    rawArrowSchema: DAAAAAgACAAAAAQACAAAAAQAAAA=\n",
                       "MetadataBlock");
}

/* ---------------------------------------------- forms accepted on input */

static void test_kind_case_rules(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    static const char *const ok[] = {"NdJson", "ndJson", "ndjson"};
    for (size_t i = 0; i < 3; i++) {
        char t[512];
        snprintf(t, sizeof t,
                 "kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: x\n  kind: root\n  metadata:\n"
                 "  - kind: addPushSource\n    sourceName: s\n    read:\n      kind: %s\n      encoding: utf-8\n"
                 "    merge:\n      kind: append\n",
                 ok[i]);
        odf_DatasetSnapshot *s = parse_ok(a, t, "DatasetSnapshot");
        odf_AddPushSource *p = s->metadata.items[0].value;
        assert_int_equal(p->read.type, ODF_ReadStep_NdJson);
        assert_string_equal(((odf_ReadStepNdJson *)p->read.value)->encoding, "utf-8");
    }
    expect_error("kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: x\n  kind: Root\n  metadata:\n"
                 "  - kind: AddPushSource\n    sourceName: s\n    read:\n      kind: nDjson\n"
                 "    merge:\n      kind: Append\n",
                 NULL, "manifest.yaml:10: content.metadata[0].read.kind: unknown kind 'nDjson' for ReadStep");
    /* enums */
    static const char *const eok[] = {"ByEventTime", "byEventTime", "byeventtime"};
    for (size_t i = 0; i < 3; i++) {
        char t[512];
        snprintf(t, sizeof t,
                 "kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: x\n  kind: Root\n  metadata:\n"
                 "  - kind: SetPollingSource\n    fetch:\n      kind: FilesGlob\n      path: x\n      order: %s\n"
                 "    read:\n      kind: Parquet\n    merge:\n      kind: Append\n",
                 eok[i]);
        odf_DatasetSnapshot *s = parse_ok(a, t, "DatasetSnapshot");
        odf_SetPollingSource *p = s->metadata.items[0].value;
        odf_FetchStepFilesGlob *g = p->fetch.value;
        assert_true(g->has_order);
        assert_int_equal(g->order, ODF_SourceOrdering_ByEventTime);
    }
    expect_error("kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: x\n  kind: Root\n  metadata:\n"
                 "  - kind: SetPollingSource\n    fetch:\n      kind: FilesGlob\n      path: x\n"
                 "      order: bYeventtime\n    read:\n      kind: Parquet\n    merge:\n      kind: Append\n",
                 NULL,
                 "manifest.yaml:11: content.metadata[0].fetch.order: unknown value 'bYeventtime' for SourceOrdering");
    silt_arena_free(a);
}

static void test_union_short_form(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    const char *t = BLOCK_HEAD "  event:\n"
                               "    kind: SetDataSchema\n"
                               "    schema:\n"
                               "      fields:\n"
                               "      - name: long\n"
                               "        type:\n"
                               "          kind: Timestamp\n"
                               "      - name: short\n"
                               "        type: Timestamp\n";
    odf_MetadataBlock *b = parse_ok(a, t, "MetadataBlock");
    odf_SetDataSchema *s = b->event.value;
    odf_DataField *f = s->schema->fields.items[1];
    assert_int_equal(f->type.type, ODF_DataType_Timestamp);
    assert_false(((odf_DataTypeTimestamp *)f->type.value)->has_unit);
    silt_buf out = SILT_BUF_INIT;
    assert_int_equal(odf_yaml_emit_manifest(&out, "MetadataBlock", 3, &odf_desc_MetadataBlock, b), 0);
    assert_string_equal(out.data, BLOCK_HEAD "  event:\n"
                                             "    kind: SetDataSchema\n"
                                             "    schema:\n"
                                             "      fields:\n"
                                             "      - name: long\n"
                                             "        type:\n"
                                             "          kind: Timestamp\n"
                                             "      - name: short\n"
                                             "        type:\n"
                                             "          kind: Timestamp\n");
    silt_buf_free(&out);
    expect_error(BLOCK_HEAD "  event:\n    kind: SetDataSchema\n    schema:\n      fields:\n"
                            "      - name: short\n        type: Invalid\n",
                 NULL, "manifest.yaml:12: content.event.schema.fields[0].type: unknown kind 'Invalid' for DataType");
    /* short form of a variant with required fields */
    expect_error(BLOCK_HEAD "  event:\n    kind: SetDataSchema\n    schema:\n      fields:\n"
                            "      - name: short\n        type: Option\n",
                 NULL, "manifest.yaml:12: content.event.schema.fields[0].type.inner: missing required field");
    silt_arena_free(a);
}

static void test_json_manifest(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    const char *t = "{\"kind\": \"MetadataBlock\", \"version\": 2, \"content\": {"
                    "\"systemTime\": \"2020-01-01T12:00:00Z\", \"sequenceNumber\": 5,"
                    "\"event\": {\"kind\": \"AddData\", \"prevOffset\": 7,"
                    "\"newData\": {\"logicalHash\": \"f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\","
                    "\"physicalHash\": \"f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\","
                    "\"offsetInterval\": {\"start\": 8, \"end\": 9}, \"size\": 1}}}}";
    int version = 0;
    void *obj;
    assert_int_equal(odf_yaml_parse_manifest(a, t, strlen(t), "m.json", "MetadataBlock", &version, &obj), 0);
    assert_int_equal(version, 2);
    odf_MetadataBlock *b = obj;
    assert_int_equal(b->sequence_number, 5);
    assert_null(b->prev_block_hash.data);
    odf_AddData *ad = b->event.value;
    assert_int_equal(ad->prev_offset, 7);
    assert_int_equal(ad->new_data->offset_interval->end, 9);

    /* struct -> JSON uses the same field names/forms */
    json_t *j = odf_to_json(&odf_desc_MetadataBlock, b);
    assert_non_null(j);
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(s, "{\"systemTime\":\"2020-01-01T12:00:00Z\",\"sequenceNumber\":5,"
                           "\"event\":{\"kind\":\"AddData\",\"prevOffset\":7,\"newData\":{"
                           "\"logicalHash\":\"f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\","
                           "\"physicalHash\":\"f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\","
                           "\"offsetInterval\":{\"start\":8,\"end\":9},\"size\":1}}}");
    free(s);
    json_decref(j);
    silt_arena_free(a);
}

static void test_to_json_schema(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    odf_MetadataBlock *b = parse_ok(a, BLOCK_SCHEMA, "MetadataBlock");
    json_t *j = odf_to_json(&odf_desc_MetadataBlock, b);
    assert_non_null(j);
    json_t *ev = json_object_get(j, "event");
    assert_string_equal(json_string_value(json_object_get(ev, "kind")), "SetDataSchema");
    json_t *f0 = json_array_get(json_object_get(json_object_get(ev, "schema"), "fields"), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(f0, "type"), "kind")), "String");
    json_t *extra = json_object_get(f0, "extra");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(extra, "arrow.apache.org/bufferEncoding"),
                                                        "offsetBitWidth")),
                     32);
    json_decref(j);

    odf_union u;
    const char *evt = "kind: SetInfo\ndescription: d\nkeywords: [a, b]\n";
    assert_int_equal(odf_yaml_parse_event(a, evt, strlen(evt), "e.yaml", &u), 0);
    assert_int_equal(u.type, ODF_MetadataEvent_SetInfo);
    j = odf_union_to_json(&odf_udesc_MetadataEvent, &u);
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(s, "{\"kind\":\"SetInfo\",\"description\":\"d\",\"keywords\":[\"a\",\"b\"]}");
    free(s);
    json_decref(j);
    silt_buf out = SILT_BUF_INIT;
    assert_int_equal(odf_yaml_emit_union(&out, &odf_udesc_MetadataEvent, &u, 2), 0);
    assert_string_equal(out.data, "  kind: SetInfo\n  description: d\n  keywords:\n  - a\n  - b\n");
    silt_buf_free(&out);
    silt_arena_free(a);
}

static void test_emit_indent_and_strings(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    odf_SetInfo *si = silt_arena_alloc(a, sizeof *si);
    si->description = "line1\nline2\n";
    static char *kw[] = {"true", "False", "0x1F", "-5", "+1", "1e5", ".inf", "-.Inf", ".5", "5.", "0o17",
                         "1_000", "y", "a: b", "key:value", "[x]", "{y}", "*star", "&amp", "!bang", "%pct",
                         "`tick", "|bar", ">gt", "trailing ", "inf", "NaN", "12:30", "-"};
    si->keywords.items = kw;
    si->keywords.n = sizeof kw / sizeof kw[0];
    si->keywords.present = true;
    silt_buf out = SILT_BUF_INIT;
    assert_int_equal(odf_yaml_emit(&out, &odf_desc_SetInfo, si, 4), 0);
    assert_string_equal(out.data, "    description: |\n"
                                  "      line1\n"
                                  "      line2\n"
                                  "    keywords:\n"
                                  "    - 'true'\n"
                                  "    - 'False'\n"
                                  "    - '0x1F'\n"
                                  "    - '-5'\n"
                                  "    - '+1'\n"
                                  "    - '1e5'\n"
                                  "    - '.inf'\n"
                                  "    - '-.Inf'\n"
                                  "    - '.5'\n"
                                  "    - '5.'\n"
                                  "    - '0o17'\n"
                                  "    - 1_000\n"
                                  "    - y\n"
                                  "    - 'a: b'\n"
                                  "    - key:value\n"
                                  "    - '[x]'\n"
                                  "    - '{y}'\n"
                                  "    - '*star'\n"
                                  "    - '&amp'\n"
                                  "    - '!bang'\n"
                                  "    - '%pct'\n"
                                  "    - '`tick'\n"
                                  "    - '|bar'\n"
                                  "    - '>gt'\n"
                                  "    - 'trailing '\n"
                                  "    - inf\n"
                                  "    - NaN\n"
                                  "    - 12:30\n"
                                  "    - '-'\n");
    /* and it reads back */
    void *back;
    char *doc = out.data;
    assert_int_equal(odf_yaml_parse(a, doc, out.len, "x", &odf_desc_SetInfo, &back), 0);
    odf_SetInfo *b = back;
    assert_string_equal(b->description, si->description);
    for (size_t i = 0; i < si->keywords.n; i++)
        assert_string_equal(b->keywords.items[i], kw[i]);
    silt_buf_free(&out);
    silt_arena_free(a);
}

static void test_numbers_as_string_fields(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    const char *t = "description: 42\nkeywords: [1.5, true, 007]\n";
    void *obj;
    assert_int_equal(odf_yaml_parse(a, t, strlen(t), "x.yaml", &odf_desc_SetInfo, &obj), 0);
    odf_SetInfo *si = obj;
    assert_string_equal(si->description, "42");
    assert_string_equal(si->keywords.items[0], "1.5");
    assert_string_equal(si->keywords.items[1], "true");
    assert_string_equal(si->keywords.items[2], "007");
    /* null = absent */
    t = "description: ~\nkeywords: []\n";
    assert_int_equal(odf_yaml_parse(a, t, strlen(t), "x.yaml", &odf_desc_SetInfo, &obj), 0);
    si = obj;
    assert_null(si->description);
    assert_true(si->keywords.present);
    assert_int_equal(si->keywords.n, 0);
    silt_buf out = SILT_BUF_INIT;
    assert_int_equal(odf_yaml_emit(&out, &odf_desc_SetInfo, si, 0), 0);
    assert_string_equal(out.data, "keywords: []\n");
    silt_buf_free(&out);
    silt_arena_free(a);
}

/* ----------------------------------------------------------- error classes */

static void test_errors_types(void **state)
{
    (void)state;
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    newData:\n"
                            "      logicalHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\n"
                            "      physicalHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\n"
                            "      offsetInterval:\n        start: abc\n        end: 1\n      size: 1\n",
                 NULL,
                 "manifest.yaml:13: content.event.newData.offsetInterval.start: expected an unsigned integer, got 'abc'");
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    prevOffset: -1\n", NULL,
                 "manifest.yaml:9: content.event.prevOffset: expected an unsigned integer, got '-1'");
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    prevOffset: 18446744073709551616\n", NULL,
                 "manifest.yaml:9: content.event.prevOffset: integer '18446744073709551616' out of range "
                 "(0..18446744073709551615)");
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    prevOffset: '5'\n", NULL,
                 "manifest.yaml:9: content.event.prevOffset: expected an unsigned integer, got a quoted string '5'");
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    prevOffset: [1]\n", NULL,
                 "manifest.yaml:9: content.event.prevOffset: expected an unsigned integer, got a sequence");
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    prevOffset: 1.5\n", NULL,
                 "manifest.yaml:9: content.event.prevOffset: expected an unsigned integer, got '1.5'");
    /* signed range */
    expect_error(BLOCK_HEAD "  event:\n    kind: SetDataSchema\n    schema:\n      fields:\n"
                            "      - name: x\n        type:\n          kind: Decimal\n          precision: 1\n"
                            "          scale: 2147483648\n",
                 NULL,
                 "manifest.yaml:15: content.event.schema.fields[0].type.scale: integer '2147483648' out of range "
                 "(-2147483648..2147483647)");
    expect_error(BLOCK_HEAD "  event:\n    kind: SetDataSchema\n    schema:\n      fields:\n"
                            "      - name: x\n        type:\n          kind: Decimal\n          precision: 4294967296\n"
                            "          scale: 0\n",
                 NULL,
                 "manifest.yaml:14: content.event.schema.fields[0].type.precision: integer '4294967296' out of range "
                 "(0..4294967295)");
    expect_error("kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: x\n  kind: Root\n  metadata:\n"
                 "  - kind: SetPollingSource\n    fetch:\n      kind: Mqtt\n      host: h\n      port: -2147483649\n"
                 "      topics: []\n    read:\n      kind: Parquet\n    merge:\n      kind: Append\n",
                 NULL,
                 "manifest.yaml:11: content.metadata[0].fetch.port: integer '-2147483649' out of range "
                 "(-2147483648..2147483647)");
    /* bools */
    expect_error("kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: x\n  kind: Root\n  metadata:\n"
                 "  - kind: AddPushSource\n    sourceName: s\n    read:\n      kind: Csv\n      header: yes\n"
                 "    merge:\n      kind: Append\n",
                 NULL, "manifest.yaml:11: content.metadata[0].read.header: expected a boolean (true or false), got 'yes'");
    /* strings vs. collections */
    expect_error("kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: {a: 1}\n  kind: Root\n  metadata: []\n", NULL,
                 "manifest.yaml:4: content.name: expected a string, got a mapping");
    expect_error("kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: x\n  kind: Root\n  metadata: {a: 1}\n", NULL,
                 "manifest.yaml:6: content.metadata: expected a sequence, got a mapping");
    expect_error("kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: x\n  kind: Root\n  metadata:\n  - 5\n", NULL,
                 "manifest.yaml:7: content.metadata[0]: unknown kind '5' for MetadataEvent");
    /* timestamps */
    expect_error("kind: MetadataBlock\nversion: 3\ncontent:\n  systemTime: yesterday\n  sequenceNumber: 1\n"
                 "  event:\n    kind: DisablePollingSource\n",
                 NULL, "manifest.yaml:4: content.systemTime: invalid timestamp 'yesterday' (expected RFC 3339)");
}

static void test_errors_structure(void **state)
{
    (void)state;
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    foo: 1\n", NULL,
                 "manifest.yaml:9: content.event.foo: unknown field 'foo' in AddData");
    expect_error(BLOCK_HEAD "  event:\n    kind: Foo\n", NULL,
                 "manifest.yaml:8: content.event.kind: unknown kind 'Foo' for MetadataEvent");
    expect_error(BLOCK_HEAD "  event:\n    prevOffset: 1\n", NULL,
                 "manifest.yaml:8: content.event: missing 'kind' for MetadataEvent");
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    prevOffset: 1\n    prevOffset: 2\n", NULL,
                 "manifest.yaml:10: content.event.prevOffset: duplicate field 'prevOffset'");
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    kind: AddData\n", NULL,
                 "manifest.yaml:9: content.event.kind: duplicate field 'kind'");
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    extra:\n      a/b: 1\n      a/b: 2\n", NULL,
                 "manifest.yaml:11: content.event.extra.a/b: duplicate key 'a/b'");
    /* missing required fields */
    expect_error(BLOCK_HEAD "  event:\n    kind: AddData\n    newData:\n"
                            "      logicalHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\n"
                            "      physicalHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272\n"
                            "      offsetInterval:\n        start: 0\n      size: 1\n",
                 NULL, "manifest.yaml:13: content.event.newData.offsetInterval.end: missing required field");
    expect_error("kind: MetadataBlock\nversion: 3\ncontent:\n  systemTime: 2020-01-01T00:00:00Z\n  sequenceNumber: 1\n",
                 NULL, "manifest.yaml:4: content.event: missing required field");
    expect_error(BLOCK_HEAD "  event:\n    kind: Seed\n    datasetKind: Root\n", NULL,
                 "manifest.yaml:8: content.event.datasetId: missing required field");
    expect_error("kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: x\n  metadata: []\n", NULL,
                 "manifest.yaml:4: content.kind: missing required field");
    /* envelope */
    expect_error("kind: MetadataBlock\nversion: 1\ncontent: {}\n", NULL,
                 "manifest.yaml:2: version: unsupported MetadataBlock version '1' (supported: 2..3)");
    expect_error("kind: DatasetSnapshot\nversion: 2\ncontent: {}\n", NULL,
                 "manifest.yaml:2: version: unsupported DatasetSnapshot version '2' (supported: 1)");
    expect_error("kind: Foo\nversion: 1\ncontent: {}\n", NULL,
                 "manifest.yaml:1: kind: unsupported manifest kind 'Foo'");
    expect_error("kind: MetadataBlock\nversion: 3\ncontent: {}\n", "DatasetSnapshot",
                 "manifest.yaml:1: kind: expected a DatasetSnapshot manifest, got 'MetadataBlock'");
    expect_error("version: 3\ncontent: {}\n", NULL, "manifest.yaml:1: kind: missing required field");
    expect_error("kind: MetadataBlock\nversion: 3\ncontent: {}\nother: 1\n", NULL,
                 "manifest.yaml:4: unknown manifest field 'other'");
    expect_error("- a\n", NULL, "manifest.yaml:1: expected a manifest mapping, got a sequence");
    expect_error("", NULL, "manifest.yaml:1: empty YAML document");
    expect_error("a: 1\n---\nb: 2\n", NULL, "manifest.yaml:2: more than one YAML document");
    expect_error("a: &x 1\nb: *x\n", NULL, "manifest.yaml:1: YAML anchors and aliases are not supported");
    expect_error("a: 1\nb: *x\n", NULL, "manifest.yaml:2: YAML anchors and aliases are not supported");
    expect_error("kind: [\n", NULL, "manifest.yaml:2: YAML syntax error: did not find expected node content "
                                   "while parsing a flow node");
}

static void test_errors_bytes(void **state)
{
    (void)state;
    expect_error("kind: MetadataBlock\nversion: 3\ncontent:\n  systemTime: 2020-01-01T00:00:00Z\n"
                 "  prevBlockHash: f1620zz\n  sequenceNumber: 1\n  event:\n    kind: DisablePollingSource\n",
                 NULL, "manifest.yaml:5: content.prevBlockHash: invalid multihash 'f1620zz'");
    expect_error("kind: MetadataBlock\nversion: 3\ncontent:\n  systemTime: 2020-01-01T00:00:00Z\n"
                 "  prevBlockHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d1966202\n"
                 "  sequenceNumber: 1\n  event:\n    kind: DisablePollingSource\n",
                 NULL,
                 "manifest.yaml:5: content.prevBlockHash: invalid multihash "
                 "'f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f36...'");
    expect_error(BLOCK_HEAD "  event:\n    kind: Seed\n    datasetId: did:web:example.org\n    datasetKind: Root\n",
                 NULL, "manifest.yaml:9: content.event.datasetId: invalid DID 'did:web:example.org': expected 'did:odf:…'");
    expect_error(BLOCK_HEAD "  event:\n    kind: Seed\n    datasetId: did:odf:fed01\n    datasetKind: Root\n", NULL,
                 "manifest.yaml:9: content.event.datasetId: invalid DID 'did:odf:fed01'");
    expect_error(BLOCK_HEAD "  event:\n    kind: SetDataSchema\n    rawArrowSchema: '!!!'\n", NULL,
                 "manifest.yaml:9: content.event.rawArrowSchema: invalid base64 '!!!'");
}

static void test_depth_limit(void **state)
{
    (void)state;
    silt_buf b = SILT_BUF_INIT;
    for (int i = 0; i < 100; i++)
        silt_buf_putc(&b, '[');
    for (int i = 0; i < 100; i++)
        silt_buf_putc(&b, ']');
    silt_arena *a = silt_arena_new();
    void *obj;
    assert_int_equal(odf_yaml_parse_manifest(a, b.data, b.len, "deep.yaml", NULL, NULL, &obj), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "deep.yaml:1: nesting deeper than 64 levels");
    /* deep DataType nesting inside limits parses fine */
    silt_buf t = SILT_BUF_INIT;
    silt_buf_puts(&t, BLOCK_HEAD "  event:\n    kind: SetDataSchema\n    schema:\n      fields:\n      - name: x\n"
                                 "        type: ");
    for (int i = 0; i < 20; i++)
        silt_buf_puts(&t, "{kind: Option, inner: ");
    silt_buf_puts(&t, "Int8");
    for (int i = 0; i < 20; i++)
        silt_buf_puts(&t, "}");
    silt_buf_puts(&t, "\n");
    assert_int_equal(odf_yaml_parse_manifest(a, t.data, t.len, "ok.yaml", NULL, NULL, &obj), 0);
    silt_buf_free(&t);
    silt_buf_free(&b);
    silt_arena_free(a);
}

static void test_json_canonical_floats(void **state)
{
    (void)state;
    struct {
        double v;
        const char *s;
    } cases[] = {{1.0, "1.0"},       {0.1, "0.1"},         {1.5, "1.5"},       {-2.25, "-2.25"},
                 {1e16, "1e16"},     {1e15, "1000000000000000.0"},             {123456.0, "123456.0"},
                 {1e-7, "1e-7"},     {0.0001, "0.0001"},   {1.5e-7, "1.5e-7"}, {0.0, "0.0"},
                 {1.7976931348623157e308, "1.7976931348623157e308"},            {5e-324, "5e-324"},
                 {0.3, "0.3"},       {2.5e20, "2.5e20"},   {123.456, "123.456"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[40];
        odf_json_format_double(cases[i].v, out);
        assert_string_equal(out, cases[i].s);
    }
    json_t *v = json_pack("{s:s, s:i, s:[b, n], s:s}", "b", "\x01\"\\/é", "a", 1, "c", 1, "\xe2\x80\xa8", "x");
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(odf_json_canonical(&b, v), 0);
    assert_string_equal(b.data, "{\"a\":1,\"b\":\"\\u0001\\\"\\\\/é\",\"c\":[true,null],\"\xe2\x80\xa8\":\"x\"}");
    silt_buf_free(&b);
    json_decref(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_files_roundtrip),
        cmocka_unit_test(test_golden_case3_values),
        cmocka_unit_test(test_reference_examples_roundtrip),
        cmocka_unit_test(test_extra_attributes_json),
        cmocka_unit_test(test_snapshot_many_events),
        cmocka_unit_test(test_all_read_steps),
        cmocka_unit_test(test_block_events_roundtrip),
        cmocka_unit_test(test_kind_case_rules),
        cmocka_unit_test(test_union_short_form),
        cmocka_unit_test(test_json_manifest),
        cmocka_unit_test(test_to_json_schema),
        cmocka_unit_test(test_emit_indent_and_strings),
        cmocka_unit_test(test_numbers_as_string_fields),
        cmocka_unit_test(test_errors_types),
        cmocka_unit_test(test_errors_structure),
        cmocka_unit_test(test_errors_bytes),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_json_canonical_floats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
