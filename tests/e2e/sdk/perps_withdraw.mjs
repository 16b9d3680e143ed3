// Drives a withdrawal from the perps exchange (chain 1337) with the official TypeScript SDK,
// unchanged: dynamic chains from our /chains, a viem private-key wallet, getQuote with
// protocolVersion v2, then execute. The SDK signs both steps itself: the `authorize` signature
// (posted to our /authorize) and the `deposit` step, which it turns into an exchange-signed
// `sendAsset` and posts to the exchange.
//
// The SDK posts that action to a fixed URL, 'https://api.hyperliquid.xyz/exchange'
// (_esm/src/utils/hyperliquid.js line 59, postHyperliquidSignature), with axios's default
// instance; no client option changes it. To reach the devnet exchange this harness adds a
// request interceptor to that same axios instance (node_modules holds one axios) that
// rewrites the host to the devnet exchange's URL. Nothing else is changed.
//
// Input: one JSON argument {baseApiUrl, exchangeUrl, privateKey, walletRpcUrl,
// destinationChainId, originCurrency, destinationCurrency, amount}. Output: one JSON line.
import axios from 'axios'
import { createClient, getClient, LogLevel } from '@relayprotocol/relay-sdk'
import { configureDynamicChains } from '@relayprotocol/relay-sdk/chain-utils'
import { createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const input = JSON.parse(process.argv[2])
const REAL_EXCHANGE = 'https://api.hyperliquid.xyz'
const redirected = []
axios.interceptors.request.use((config) => {
  if (typeof config.url === 'string' && config.url.startsWith(REAL_EXCHANGE)) {
    config.url = input.exchangeUrl + config.url.slice(REAL_EXCHANGE.length)
    redirected.push(config.url)
  }
  return config
})

createClient({
  baseApiUrl: input.baseApiUrl,
  source: 'crossfill-e2e',
  pollingInterval: 200,
  confirmationPollingInterval: 100,
  logLevel: LogLevel.None,
})

const chains = await configureDynamicChains()
const destination = chains.find((chain) => chain.id === input.destinationChainId)
if (!chains.some((chain) => chain.id === 1337)) throw new Error('chain 1337 missing from /chains')
if (!destination) throw new Error(`chain ${input.destinationChainId} missing from /chains`)

// The wallet's active chain is an EVM chain (the exchange has no RPC); the SDK signs both
// steps under its chain id.
const wallet = createWalletClient({
  account: privateKeyToAccount(input.privateKey),
  chain: destination.viemChain,
  transport: http(input.walletRpcUrl),
})

const quote = await getClient().actions.getQuote(
  {
    chainId: 1337,
    toChainId: input.destinationChainId,
    currency: input.originCurrency,
    toCurrency: input.destinationCurrency,
    amount: input.amount,
    tradeType: 'EXACT_INPUT',
    wallet,
    options: { protocolVersion: 'v2' },
  },
  true,
)

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
    requestId: quote.steps.at(-1).requestId,
    quotedOutput: quote.details.currencyOut.amount,
    stepIds: quote.steps.map((step) => step.id),
    executedStepIds: result.data.steps.map((step) => step.id),
    itemStatuses: result.data.steps.flatMap((step) => step.items.map((item) => item.status)),
    txHashes: result.data.steps.at(-1).items[0].txHashes ?? [],
    checkStatuses,
    redirected,
  }),
)
