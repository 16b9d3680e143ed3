// Drives one quote end to end with the official TypeScript SDK, as an integrator's app would:
// dynamic chains from our /chains, a viem private-key wallet, getQuote, then execute.
// Input: one JSON argument {baseApiUrl, privateKey, originChainId, destinationChainId,
// originCurrency, destinationCurrency, amount, tradeType, options?} (`options`: extra quote
// body fields, as an app passes them to getQuote). Output: one JSON line on stdout
// with the quote, every status the SDK saw, and the final step states.
import { createClient, getClient, LogLevel } from '@relayprotocol/relay-sdk'
import { configureDynamicChains } from '@relayprotocol/relay-sdk/chain-utils'
import { createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const input = JSON.parse(process.argv[2])

createClient({
  baseApiUrl: input.baseApiUrl,
  source: 'crossfill-e2e',
  pollingInterval: 200,
  confirmationPollingInterval: 100,
  logLevel: LogLevel.None,
})

const chains = await configureDynamicChains()
const origin = chains.find((chain) => chain.id === input.originChainId)
if (!origin) throw new Error(`origin chain ${input.originChainId} missing from /chains`)

const wallet = createWalletClient({
  account: privateKeyToAccount(input.privateKey),
  chain: origin.viemChain,
  transport: http(origin.httpRpcUrl),
})

const quote = await getClient().actions.getQuote(
  {
    chainId: input.originChainId,
    toChainId: input.destinationChainId,
    currency: input.originCurrency,
    toCurrency: input.destinationCurrency,
    amount: input.amount,
    tradeType: input.tradeType,
    wallet,
    options: input.options ?? {},
  },
  true, // user and recipient default to the wallet's address, as in an app
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

const steps = result.data.steps.map((step) => ({
  id: step.id,
  items: step.items.map((item) => ({
    status: item.status,
    txHashes: item.txHashes ?? [],
    internalTxHashes: item.internalTxHashes ?? [],
  })),
}))
console.log(
  JSON.stringify({
    chainIds: chains.map((chain) => chain.id),
    requestId: quote.steps.at(-1).requestId,
    quotedOutput: quote.details.currencyOut.amount,
    operation: quote.details.operation,
    stepIds: quote.steps.map((step) => step.id),
    stepKinds: quote.steps.map((step) => step.kind),
    checkStatuses,
    steps,
  }),
)
