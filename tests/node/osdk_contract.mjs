// osdk_contract.mjs — contract tests of silt serve's Foundry datasets API v2
// with Palantir's official TypeScript client (@osdk/foundry.datasets 2.38.0,
// @osdk/client 2.22.0; tests/node/package.json). Driven by
// tests/integration/test_serve_foundry.sh: node osdk_contract.mjs BASE TOKEN
// against a fresh workspace. Tests run in order and build on each other
// (datasets t1, t2). Errors are compared by their fields (statusCode,
// errorCode, errorName, parameters), never with instanceof (see
// research/foundry-api.md §1.1 on duplicate copies of the error class).
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { createPlatformClient } from "@osdk/client";
import { Datasets, Branches, Transactions, Files } from "@osdk/foundry.datasets";

const [BASE, TOKEN] = process.argv.slice(2);
const FOLDER = "ri.compass.main.folder.c410f510-2937-420e-8ea3-8c9bcb3c1791";
const DS_RID = /^ri\.silt\.main\.dataset\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TX_RID = /^ri\.silt\.main\.transaction\.[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PATH = "dir/sub dir/a+b.csv";

let client, ds, t1, t2, t3, t4, devTx;

before(async () => {
  // the client retries refused connections for ~7 s: wait with plain fetch
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(BASE + "/health");
      if (r.ok) break;
    } catch {
      await new Promise((ok) => setTimeout(ok, 50));
    }
  }
  client = createPlatformClient(BASE, async () => TOKEN);
});

// The call must fail with exactly these fields (parameters compared whole
// when given).
async function rejects(p, status, code, name, params) {
  let err;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected ${name}, the call succeeded`);
  assert.equal(err.statusCode, status, `status of ${err.errorName}: ${err.message}`);
  assert.equal(err.errorCode, code);
  assert.equal(err.errorName, name, err.message);
  assert.match(err.errorInstanceId, UUID);
  if (params) assert.deepEqual(err.parameters, params);
  return err;
}

const names = (list) => list.data.map((f) => f.path);

test("Datasets.create / get", async () => {
  ds = await Datasets.create(client, { name: "t1", parentFolderRid: FOLDER });
  assert.match(ds.rid, DS_RID);
  assert.deepEqual(ds, { rid: ds.rid, name: "t1", parentFolderRid: FOLDER });
  assert.deepEqual(await Datasets.get(client, ds.rid), ds);
  assert.deepEqual(await Datasets.get(client, "t1"), ds); // a name is accepted too
  await rejects(Datasets.create(client, { name: "t1", parentFolderRid: FOLDER }), 409, "CONFLICT",
    "ResourceNameAlreadyExists", { parentFolderRid: FOLDER, resourceName: "t1" });
  await rejects(Datasets.create(client, { name: "t3" }), 400, "INVALID_ARGUMENT", "InvalidParameterCombination",
    { validCombinations: "name, parentFolderRid", providedParameters: "name" });
  const e = await rejects(Datasets.create(client, { name: "My Dataset", parentFolderRid: FOLDER }), 400,
    "INVALID_ARGUMENT", "InvalidDisplayName", { displayName: "My Dataset" });
  assert.equal(e.message, "invalid dataset name 'My Dataset': a name is letters and digits, with single '-' or '.' " +
    "between them (the ODF DatasetName grammar, e.g. 'sales', 'city-populations', 'com.example.sales'), at most 100 characters");
  await rejects(Datasets.get(client, "ri.silt.main.dataset.00000000-0000-4000-8000-000000000000"), 404,
    "NOT_FOUND", "DatasetNotFound", { datasetRid: "ri.silt.main.dataset.00000000-0000-4000-8000-000000000000" });
});

test("lifecycle: SNAPSHOT transaction, upload, commit, content", async () => {
  t1 = await Transactions.create(client, ds.rid, { transactionType: "SNAPSHOT" }, { branchName: "master" });
  assert.match(t1.rid, TX_RID);
  assert.match(t1.createdTime, TIME);
  assert.deepEqual(t1, { rid: t1.rid, transactionType: "SNAPSHOT", status: "OPEN", createdTime: t1.createdTime });
  await rejects(Transactions.create(client, ds.rid, { transactionType: "APPEND" }, { branchName: "master" }),
    409, "CONFLICT", "OpenTransactionAlreadyExists", { datasetRid: ds.rid, branchName: "master" });
  const f = await Files.upload(client, ds.rid, PATH, new Blob(["a,b\n1,x\n"]), { transactionRid: t1.rid });
  assert.match(f.updatedTime, TIME);
  assert.deepEqual(f, { path: PATH, transactionRid: t1.rid, sizeBytes: "8", updatedTime: f.updatedTime });
  const c = await Transactions.commit(client, ds.rid, t1.rid);
  assert.equal(c.status, "COMMITTED");
  assert.match(c.closedTime, TIME);
  assert.deepEqual(c, { ...t1, status: "COMMITTED", closedTime: c.closedTime });
  assert.deepEqual(await Transactions.get(client, ds.rid, t1.rid), c);
  const notOpen = { datasetRid: ds.rid, transactionRid: t1.rid, transactionStatus: "COMMITTED" };
  await rejects(Transactions.abort(client, ds.rid, t1.rid), 400, "INVALID_ARGUMENT", "TransactionNotOpen", notOpen);
  await rejects(Transactions.commit(client, ds.rid, t1.rid), 400, "INVALID_ARGUMENT", "TransactionNotOpen", notOpen);
  await rejects(Files.upload(client, ds.rid, "late.csv", new Blob(["x"]), { transactionRid: t1.rid }), 400,
    "INVALID_ARGUMENT", "TransactionNotOpen", notOpen);
  const r = await Files.content(client, ds.rid, PATH, { branchName: "master" });
  assert.equal(r.status, 200);
  assert.equal(await r.text(), "a,b\n1,x\n");
  const g = await Files.get(client, ds.rid, PATH, { branchName: "master" });
  assert.deepEqual(g, { path: PATH, transactionRid: t1.rid, sizeBytes: "8", updatedTime: g.updatedTime });
  await rejects(Transactions.get(client, ds.rid, "ri.silt.main.transaction.00000000-0000-4000-8000-000000000000"),
    404, "NOT_FOUND", "TransactionNotFound",
    { datasetRid: ds.rid, transactionRid: "ri.silt.main.transaction.00000000-0000-4000-8000-000000000000" });
});

test("upload without transactionRid: UPDATE by default, transactionType overrides", async () => {
  const f = await Files.upload(client, ds.rid, "b.csv", new Blob(["a,b\n2,y\n"]));
  assert.match(f.transactionRid, TX_RID);
  assert.equal(f.sizeBytes, "8");
  t2 = await Transactions.get(client, ds.rid, f.transactionRid);
  assert.equal(t2.transactionType, "UPDATE");
  assert.equal(t2.status, "COMMITTED");
  assert.deepEqual(names(await Files.list(client, ds.rid)), ["b.csv", PATH]);

  // an APPEND that overwrites a file fails at commit, and stays OPEN
  t3 = await Transactions.create(client, ds.rid, { transactionType: "APPEND" });
  await Files.upload(client, ds.rid, "b.csv", new Blob(["changed\n"]), { transactionRid: t3.rid });
  await rejects(Transactions.commit(client, ds.rid, t3.rid), 404, "NOT_FOUND", "FileAlreadyExists",
    { datasetRid: ds.rid, transactionRid: t3.rid, path: "b.csv" });
  assert.equal((await Transactions.get(client, ds.rid, t3.rid)).status, "OPEN");
  const ab = await Transactions.abort(client, ds.rid, t3.rid);
  assert.equal(ab.status, "ABORTED");
  assert.match(ab.closedTime, TIME);

  const e = await Files.upload(client, ds.rid, "e.csv", new Blob(["a,b\n5,z\n"]), { transactionType: "APPEND" });
  t4 = await Transactions.get(client, ds.rid, e.transactionRid);
  assert.equal(t4.transactionType, "APPEND");
  assert.deepEqual(names(await Files.list(client, ds.rid)), ["b.csv", PATH, "e.csv"]);
  assert.equal(await (await Files.content(client, ds.rid, "b.csv")).text(), "a,b\n2,y\n");

  // a second dataset: SNAPSHOT through transactionType replaces the view
  const d2 = await Datasets.create(client, { name: "t2", parentFolderRid: FOLDER });
  await Files.upload(client, d2.rid, "x.csv", new Blob(["1\n"]));
  const y = await Files.upload(client, d2.rid, "y.csv", new Blob(["2\n"]), { transactionType: "SNAPSHOT" });
  assert.equal((await Transactions.get(client, d2.rid, y.transactionRid)).transactionType, "SNAPSHOT");
  assert.deepEqual(names(await Files.list(client, d2.rid)), ["y.csv"]);
  await rejects(Files.upload(client, d2.rid, "z.csv", new Blob(["3\n"]), { transactionType: "DELETE" }), 400,
    "INVALID_ARGUMENT", "InvalidTransactionType");
});

test("views: branch, end, start+end, pathPrefix; files not in a view", async () => {
  assert.deepEqual(names(await Files.list(client, ds.rid, { branchName: "master" })), ["b.csv", PATH, "e.csv"]);
  assert.deepEqual(names(await Files.list(client, ds.rid, { endTransactionRid: t1.rid })), [PATH]);
  assert.deepEqual(names(await Files.list(client, ds.rid, { endTransactionRid: t2.rid })), ["b.csv", PATH]);
  assert.deepEqual(names(await Files.list(client, ds.rid, { startTransactionRid: t2.rid, endTransactionRid: t2.rid })),
    ["b.csv"]);
  assert.deepEqual(names(await Files.list(client, ds.rid, { startTransactionRid: t2.rid, endTransactionRid: t4.rid })),
    ["b.csv", "e.csv"]);
  assert.deepEqual(names(await Files.list(client, ds.rid, { pathPrefix: "dir/" })), [PATH]);
  assert.deepEqual(names(await Files.list(client, ds.rid, { pathPrefix: "nothing/" })), []);
  const one = await Files.list(client, ds.rid, { startTransactionRid: t1.rid, endTransactionRid: t1.rid });
  assert.deepEqual(one.data, [{ path: PATH, transactionRid: t1.rid, sizeBytes: "8", updatedTime: one.data[0].updatedTime }]);
  assert.equal(one.nextPageToken, undefined);
  await rejects(Files.get(client, ds.rid, "b.csv", { endTransactionRid: t1.rid }), 404, "NOT_FOUND",
    "FileNotFoundOnTransactionRange", { datasetRid: ds.rid, endTransactionRid: t1.rid, path: "b.csv" });
  await rejects(Files.get(client, ds.rid, "nope.csv", { branchName: "master" }), 404, "NOT_FOUND",
    "FileNotFoundOnBranch", { datasetRid: ds.rid, branchName: "master", path: "nope.csv" });
  await rejects(Files.content(client, ds.rid, "nope.csv"), 404, "NOT_FOUND", "FileNotFoundOnBranch");
  await rejects(Files.list(client, ds.rid, { endTransactionRid: t3.rid }), 400, "INVALID_ARGUMENT",
    "TransactionNotCommitted", { datasetRid: ds.rid, transactionRid: t3.rid, transactionStatus: "ABORTED" });
  await rejects(Files.list(client, ds.rid, { startTransactionRid: t1.rid }), 400, "INVALID_ARGUMENT",
    "InvalidParameterCombination");
  await rejects(Files.list(client, ds.rid, { branchName: "nobranch" }), 404, "NOT_FOUND", "BranchNotFound",
    { datasetRid: ds.rid, branchName: "nobranch" });
});

test("pagination: pageSize 1 walks every file, InvalidPageSize, InvalidPageToken", async () => {
  const seen = [], tokens = [];
  let pageToken;
  for (let i = 0; i < 10; i++) {
    const p = await Files.list(client, ds.rid, { pageSize: 1, pageToken });
    assert.equal(p.data.length, 1);
    seen.push(p.data[0].path);
    tokens.push(p.nextPageToken);
    if (!p.nextPageToken) break;
    pageToken = p.nextPageToken;
  }
  assert.deepEqual(seen, ["b.csv", PATH, "e.csv"]);
  assert.equal(tokens.length, 3);
  assert.match(tokens[0], /^v1\.[A-Za-z0-9_-]+$/);
  assert.equal(tokens[2], undefined);
  assert.ok(!("nextPageToken" in (await Files.list(client, ds.rid, { pageSize: 3 }))));
  const two = await Files.list(client, ds.rid, { pageSize: 2 });
  assert.deepEqual(names(two), ["b.csv", PATH]);
  assert.deepEqual(names(await Files.list(client, ds.rid, { pageSize: 2, pageToken: two.nextPageToken })), ["e.csv"]);
  for (const bad of [0, -1, 10001])
    await rejects(Files.list(client, ds.rid, { pageSize: bad }), 400, "INVALID_ARGUMENT", "InvalidPageSize",
      { pageSize: String(bad) });
  await rejects(Branches.list(client, ds.rid, { pageSize: 10001 }), 400, "INVALID_ARGUMENT", "InvalidPageSize");
  await rejects(Files.list(client, ds.rid, { pageToken: "garbled!" }), 400, "INVALID_ARGUMENT", "InvalidPageToken",
    { pageToken: "garbled!" });
  await rejects(Files.list(client, ds.rid, { pageToken: "v1.%%%" }), 400, "INVALID_ARGUMENT", "InvalidPageToken");
});

test("branches: dev/feature x, from a transaction, list, transactions, delete", async () => {
  const dev = await Branches.create(client, ds.rid, { name: "dev/feature x" });
  assert.deepEqual(dev, { name: "dev/feature x" }); // empty: no transaction
  assert.deepEqual(await Branches.get(client, ds.rid, "dev/feature x"), dev);
  assert.deepEqual(names(await Files.list(client, ds.rid, { branchName: "dev/feature x" })), []);
  const rel = await Branches.create(client, ds.rid, { name: "rel", transactionRid: t1.rid });
  assert.deepEqual(rel, { name: "rel", transactionRid: t1.rid });
  assert.deepEqual(names(await Files.list(client, ds.rid, { branchName: "rel" })), [PATH]);
  await rejects(Branches.create(client, ds.rid, { name: "rel" }), 409, "CONFLICT", "BranchAlreadyExists",
    { datasetRid: ds.rid, branchName: "rel" });
  await rejects(Branches.create(client, ds.rid, { name: "bad", transactionRid: t3.rid }), 400, "INVALID_ARGUMENT",
    "TransactionNotCommitted", { datasetRid: ds.rid, transactionRid: t3.rid, transactionStatus: "ABORTED" });
  await rejects(Branches.get(client, ds.rid, "nope"), 404, "NOT_FOUND", "BranchNotFound",
    { datasetRid: ds.rid, branchName: "nope" });
  await rejects(Branches.create(client, ds.rid, { name: "" }), 400, "INVALID_ARGUMENT", "InvalidBranchName",
    { branchName: "" });

  // a transaction on dev/feature x: the branch points at it while OPEN
  devTx = await Transactions.create(client, ds.rid, { transactionType: "UPDATE" }, { branchName: "dev/feature x" });
  assert.deepEqual(await Branches.get(client, ds.rid, "dev/feature x"), { name: "dev/feature x", transactionRid: devTx.rid });
  await Files.upload(client, ds.rid, "f.txt", new Blob(["dev\n"]), { transactionRid: devTx.rid, branchName: "dev/feature x" });
  await Transactions.commit(client, ds.rid, devTx.rid);
  assert.deepEqual(names(await Files.list(client, ds.rid, { branchName: "dev/feature x" })), ["f.txt"]);
  assert.deepEqual(names(await Files.list(client, ds.rid, { branchName: "master" })), ["b.csv", PATH, "e.csv"]);

  const all = await Branches.list(client, ds.rid);
  assert.deepEqual(all, { data: [{ name: "master", transactionRid: t4.rid }, { name: "dev/feature x", transactionRid: devTx.rid },
    { name: "rel", transactionRid: t1.rid }] });
  const seen = [];
  let pageToken, last;
  do {
    last = await Branches.list(client, ds.rid, { pageSize: 1, pageToken });
    seen.push(...last.data.map((b) => b.name));
    pageToken = last.nextPageToken;
  } while (pageToken);
  assert.deepEqual(seen, ["master", "dev/feature x", "rel"]);

  const bt = await Branches.transactions(client, ds.rid, "master", { preview: true });
  assert.deepEqual(bt.data.map((t) => [t.rid, t.transactionType, t.status]),
    [[t4.rid, "APPEND", "COMMITTED"], [t3.rid, "APPEND", "ABORTED"], [t2.rid, "UPDATE", "COMMITTED"],
      [t1.rid, "SNAPSHOT", "COMMITTED"]]);
  assert.equal(bt.nextPageToken, undefined);
  const p1 = await Branches.transactions(client, ds.rid, "master", { pageSize: 3 });
  assert.deepEqual(p1.data.map((t) => t.rid), [t4.rid, t3.rid, t2.rid]);
  const p2 = await Branches.transactions(client, ds.rid, "master", { pageSize: 3, pageToken: p1.nextPageToken });
  assert.deepEqual(p2.data.map((t) => t.rid), [t1.rid]);
  assert.equal(p2.nextPageToken, undefined);
  await rejects(Branches.transactions(client, ds.rid, "master", { pageSize: 51 }), 400, "INVALID_ARGUMENT",
    "InvalidPageSize", { pageSize: "51" });
  assert.deepEqual((await Branches.transactions(client, ds.rid, "dev/feature x")).data.map((t) => t.rid), [devTx.rid]);
  assert.deepEqual((await Branches.transactions(client, ds.rid, "rel")).data.map((t) => t.rid), [t1.rid]);

  const dt = await Datasets.transactions(client, ds.rid, { preview: true });
  assert.deepEqual(dt.data.map((t) => t.rid), [devTx.rid, t4.rid, t3.rid, t2.rid, t1.rid]);
  assert.deepEqual(dt.data[4], await Transactions.get(client, ds.rid, t1.rid));
  const dseen = [];
  pageToken = undefined;
  do {
    last = await Datasets.transactions(client, ds.rid, { pageSize: 2, pageToken, preview: true });
    dseen.push(last.data.map((t) => t.rid));
    pageToken = last.nextPageToken;
  } while (pageToken);
  assert.deepEqual(dseen, [[devTx.rid, t4.rid], [t3.rid, t2.rid], [t1.rid]]);

  assert.equal(await Branches.deleteBranch(client, ds.rid, "rel"), undefined);
  await rejects(Branches.get(client, ds.rid, "rel"), 404, "NOT_FOUND", "BranchNotFound");
  await rejects(Branches.deleteBranch(client, ds.rid, "rel"), 404, "NOT_FOUND", "BranchNotFound");
});

test("deleteFile: by branch (still in the historical view) and in an open DELETE transaction", async () => {
  assert.equal(await Files.deleteFile(client, ds.rid, "b.csv", { branchName: "master" }), undefined);
  assert.deepEqual(names(await Files.list(client, ds.rid)), [PATH, "e.csv"]);
  assert.deepEqual(names(await Files.list(client, ds.rid, { endTransactionRid: t2.rid })), ["b.csv", PATH]);
  assert.equal(await (await Files.content(client, ds.rid, "b.csv", { endTransactionRid: t4.rid })).text(), "a,b\n2,y\n");
  const dt = (await Datasets.transactions(client, ds.rid)).data[0];
  assert.deepEqual([dt.transactionType, dt.status], ["DELETE", "COMMITTED"]);
  await rejects(Files.deleteFile(client, ds.rid, "b.csv"), 404, "NOT_FOUND", "FileNotFoundOnBranch",
    { datasetRid: ds.rid, branchName: "master", path: "b.csv" });

  const del = await Transactions.create(client, ds.rid, { transactionType: "DELETE" });
  assert.equal(await Files.deleteFile(client, ds.rid, "e.csv", { transactionRid: del.rid }), undefined);
  assert.deepEqual(names(await Files.list(client, ds.rid)), [PATH, "e.csv"]); // not committed yet
  await Transactions.commit(client, ds.rid, del.rid);
  assert.deepEqual(names(await Files.list(client, ds.rid)), [PATH]);

  const upd = await Transactions.create(client, ds.rid, { transactionType: "UPDATE" });
  await rejects(Files.deleteFile(client, ds.rid, PATH, { transactionRid: upd.rid }), 400, "INVALID_ARGUMENT",
    "InvalidTransactionType", { datasetRid: ds.rid, transactionRid: upd.rid, transactionType: "UPDATE" });
  await rejects(Files.upload(client, ds.rid, "g.csv", new Blob(["1\n"]), { transactionRid: del.rid }), 400,
    "INVALID_ARGUMENT", "TransactionNotOpen");
  await Transactions.abort(client, ds.rid, upd.rid);
});

test("getSchema / putSchema round trip, getSchemaBatch", async () => {
  const t2ds = await Datasets.get(client, "t2");
  await rejects(Datasets.getSchema(client, t2ds.rid, { preview: true }), 404, "NOT_FOUND", "SchemaNotFound",
    { datasetRid: t2ds.rid, branchName: "master" });
  const fields = [
    { name: "a", type: "INTEGER", nullable: true },
    { name: "b", type: "STRING", nullable: false },
    { name: "price", type: "DECIMAL", precision: 10, scale: 2, nullable: true },
    { name: "tags", type: "ARRAY", nullable: true, arraySubtype: { type: "STRING", nullable: false } },
    { name: "m", type: "MAP", nullable: true, mapKeyType: { type: "STRING", nullable: false },
      mapValueType: { type: "LONG", nullable: true } },
    { name: "s", type: "STRUCT", nullable: false,
      subSchemas: [{ name: "t", type: "TIMESTAMP", nullable: true }, { name: "d", type: "DATE", nullable: true }] },
  ];
  const put = await Datasets.putSchema(client, ds.rid,
    { branchName: "master", dataframeReader: "CSV", schema: { fieldSchemaList: fields } }, { preview: true });
  assert.match(put.versionId, UUID);
  const lastTx = (await Branches.get(client, ds.rid, "master")).transactionRid;
  assert.deepEqual(put, { branchName: "master", endTransactionRid: lastTx, schema: { fieldSchemaList: fields },
    versionId: put.versionId });
  assert.deepEqual(await Datasets.getSchema(client, ds.rid, { branchName: "master", preview: true }), put);
  assert.deepEqual(await Datasets.getSchema(client, ds.rid, { versionId: put.versionId }), put);
  await rejects(Datasets.getSchema(client, ds.rid, { versionId: "00000000-0000-0000-0000-000000000000" }), 404,
    "NOT_FOUND", "SchemaNotFound");
  await rejects(Datasets.getSchema(client, ds.rid, { branchName: "dev/feature x" }), 404, "NOT_FOUND", "SchemaNotFound",
    { datasetRid: ds.rid, branchName: "dev/feature x" });
  await rejects(Datasets.putSchema(client, ds.rid, { dataframeReader: "DATASOURCE", schema: { fieldSchemaList: fields } }),
    400, "INVALID_ARGUMENT", "InvalidSchema", { errorType: "UNSUPPORTED_DATAFRAME_READER", message: "DATASOURCE" });
  const bad = await rejects(Datasets.putSchema(client, ds.rid, { schema: { fieldSchemaList: [{ name: "x", type: "NOPE", nullable: true }] } }),
    400, "INVALID_ARGUMENT", "InvalidSchema");
  assert.match(bad.message, /putSchema body: fields\[0\] 'x': unknown type 'NOPE'/);
  // a second putSchema (PARQUET, the default reader) is a new version
  const put2 = await Datasets.putSchema(client, ds.rid, { schema: { fieldSchemaList: [fields[0]] } });
  assert.notEqual(put2.versionId, put.versionId);
  assert.deepEqual(put2.schema, { fieldSchemaList: [fields[0]] });

  const batch = await Datasets.getSchemaBatch(client, [
    { datasetRid: ds.rid, branchName: "master" },
    { datasetRid: t2ds.rid }, // no schema: omitted
    { datasetRid: "ri.silt.main.dataset.00000000-0000-4000-8000-000000000000" }, // missing: omitted
  ], { preview: true });
  assert.deepEqual(batch, { data: { [ds.rid]: put2 } });
});
