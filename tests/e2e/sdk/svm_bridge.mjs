// Drives one quote to or from the SVM chain with the official SDK and the official SVM wallet
// adapter, as an integrator's app would. Input: one JSON argument {baseApiUrl, svmRpcUrl,
// svmSecretKey (JSON byte array), evmPrivateKey, originChainId, destinationChainId,
// originCurrency, destinationCurrency, amount, recipient}. Output: one JSON line.
import { createClient, getClient, LogLevel } from '@relayprotocol/relay-sdk'
import { configureDynamicChains } from '@relayprotocol/relay-sdk/chain-utils'
import { adaptSolanaWallet } from '@relayprotocol/relay-svm-wallet-adapter'
import { Connection, Keypair } from '@solana/web3.js'
import { createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const SVM_CHAIN_ID = 792703809
const input = JSON.parse(process.argv[2])

createClient({
  baseApiUrl: input.baseApiUrl,
  source: 'crossfill-e2e',
  pollingInterval: 200,
  confirmationPollingInterval: 100,
  logLevel: LogLevel.None,
})

const chains = await configureDynamicChains()

function svmWallet() {
  const keypair = Keypair.fromSecretKey(Uint8Array.from(input.svmSecretKey))
  const connection = new Connection(input.svmRpcUrl, 'confirmed')
  return adaptSolanaWallet(
    keypair.publicKey.toBase58(),
    SVM_CHAIN_ID,
    connection,
    async (transaction) => {
      transaction.sign([keypair])
      return { signature: await connection.sendTransaction(transaction) }
    },
  )
}

function evmWallet() {
  const origin = chains.find((chain) => chain.id === input.originChainId)
  if (!origin) throw new Error(`origin chain ${input.originChainId} missing from /chains`)
  return createWalletClient({
    account: privateKeyToAccount(input.evmPrivateKey),
    chain: origin.viemChain,
    transport: http(origin.httpRpcUrl),
  })
}

const wallet = input.originChainId === SVM_CHAIN_ID ? svmWallet() : evmWallet()
const user = input.originChainId === SVM_CHAIN_ID ? await wallet.address() : wallet.account.address
const quote = await getClient().actions.getQuote({
  chainId: input.originChainId,
  toChainId: input.destinationChainId,
  currency: input.originCurrency,
  toCurrency: input.destinationCurrency,
  amount: input.amount,
  tradeType: 'EXACT_INPUT',
  wallet,
  user,
  recipient: input.recipient,
})

const checkStatuses = []
const result = await getClient().actions.execute({
  quote,
  wallet,
  onProgress: ({ currentStepItem }) => {
    const status = currentStepItem?.checkStatus
    if (status && checkStatuses.at(-1) !== status) checkStatuses.push(status)
  },
})

console.log(
  JSON.stringify({
    chainIds: chains.map((chain) => chain.id),
    requestId: quote.steps.at(-1).requestId,
    quotedOutput: quote.details.currencyOut.amount,
    checkStatuses,
    steps: result.data.steps.map((step) => ({
      id: step.id,
      items: step.items.map((item) => ({ status: item.status, txHashes: item.txHashes ?? [] })),
    })),
  }),
)
