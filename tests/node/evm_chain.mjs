// evm_chain.mjs — drives an anvil node for test_evm.sh with raw JSON-RPC
// (no npm package besides solc): compiles tests/fixtures/evm_emitter.sol
// offline, deploys it from anvil's first unlocked account, and sends the
// transactions that emit the test events. Every transaction is its own block
// with the timestamp 1700000000 + 10 * block number, so rows are exact.
//   node evm_chain.mjs URL deploy SOL OUT.json   -> OUT.json {address: [A, B]}
//   node evm_chain.mjs URL transfer ADDR TO VALUE
//   node evm_chain.mjs URL mixed ADDR
//   node evm_chain.mjs URL logs                  -> the node's eth_getLogs of every block
import solc from 'solc';
import fs from 'fs';

const [url, cmd, ...args] = process.argv.slice(2);
let id = 0;
async function rpc(method, params) {
  const r = await fetch(url, {method: 'POST', headers: {'content-type': 'application/json'},
    body: JSON.stringify({jsonrpc: '2.0', id: ++id, method, params})});
  const j = await r.json();
  if (j.error) throw new Error(`${method}: ${JSON.stringify(j.error)}`);
  return j.result;
}
const word = (hex) => hex.replace(/^0x/, '').padStart(64, '0');
async function send(to, data) {
  const [from] = await rpc('eth_accounts', []);
  const next = parseInt(await rpc('eth_blockNumber', []), 16) + 1;
  await rpc('evm_setNextBlockTimestamp', [1700000000 + 10 * next]);
  const tx = await rpc('eth_sendTransaction', [{from, to, data, gas: '0x500000'}]);
  let rc = null;
  for (let i = 0; i < 100 && !rc; i++) {
    rc = await rpc('eth_getTransactionReceipt', [tx]);
    if (!rc) await new Promise((r) => setTimeout(r, 50));
  }
  if (rc.status !== '0x1') throw new Error(`transaction failed: ${JSON.stringify(rc)}`);
  return rc;
}
if (cmd === 'deploy') {
  const input = {language: 'Solidity', sources: {'E.sol': {content: fs.readFileSync(args[0], 'utf8')}},
    settings: {outputSelection: {'*': {'*': ['evm.bytecode.object']}}}};
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  for (const e of out.errors || []) if (e.severity === 'error') throw new Error(e.formattedMessage);
  const code = '0x' + out.contracts['E.sol'].Emitter.evm.bytecode.object;
  const a = (await send(undefined, code)).contractAddress;
  const b = (await send(undefined, code)).contractAddress;
  fs.writeFileSync(args[1], JSON.stringify({address: [a, b]}));
} else if (cmd === 'transfer') {
  await send(args[0], '0xa9059cbb' + word(args[1]) + word(BigInt(args[2]).toString(16)));
} else if (cmd === 'mixed') {
  await send(args[0], '0x354df1f9');
} else if (cmd === 'logs') {
  console.log(JSON.stringify(await rpc('eth_getLogs', [{fromBlock: '0x0', toBlock: 'latest'}])));
} else {
  throw new Error(`unknown command ${cmd}`);
}
