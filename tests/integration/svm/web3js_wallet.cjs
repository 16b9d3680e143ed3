// A wallet's round trip through @solana/web3.js against the devnet SVM node: build, sign,
// send and confirm (signatureSubscribe + getBlockHeight), then read balances back.
// Usage: node web3js_wallet.cjs <rpcUrl> <base58 secret key as JSON byte array> <recipient>
const web3 = require("@solana/web3.js");

async function main() {
  const [rpcUrl, secretJson, recipient] = process.argv.slice(2);
  const connection = new web3.Connection(rpcUrl, "confirmed");
  const payer = web3.Keypair.fromSecretKey(Uint8Array.from(JSON.parse(secretJson)));
  const memoProgram = new web3.PublicKey("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
  const tx = new web3.Transaction().add(
    web3.SystemProgram.transfer({
      fromPubkey: payer.publicKey,
      toPubkey: new web3.PublicKey(recipient),
      lamports: 1_234_567,
    }),
    new web3.TransactionInstruction({ keys: [], programId: memoProgram, data: Buffer.from("web3.js") }),
  );
  const signature = await web3.sendAndConfirmTransaction(connection, tx, [payer]);
  const status = await connection.getSignatureStatus(signature);
  const balance = await connection.getBalance(new web3.PublicKey(recipient));
  const tokens = await connection.getParsedTokenAccountsByOwner(payer.publicKey, {
    programId: new web3.PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
  });
  const fetched = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
  console.log(JSON.stringify({
    signature,
    confirmation: status.value.confirmationStatus,
    balance,
    tokenAmounts: tokens.value.map((a) => a.account.data.parsed.info.tokenAmount.amount),
    fee: fetched.meta.fee,
  }));
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
