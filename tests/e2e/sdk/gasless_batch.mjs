// Runs the official SDK's executeGaslessBatch against the service: a user holding no ether
// signs an EIP-7702 authorization (viem's signAuthorization) and an EIP-712 batch for the
// devnet BatchDelegate (passed to the SDK as its executor), and the SDK posts it to /execute.
// Input: one JSON argument {baseApiUrl, privateKey, apiKey, delegate, delegateAbiPath,
// originChainId, destinationChainId, originCurrency, destinationCurrency, amount}.
// Output: one JSON line {requestId, progress}.
import { readFileSync } from 'node:fs'
import { createClient, getClient, LogLevel } from '@relayprotocol/relay-sdk'
import { configureDynamicChains } from '@relayprotocol/relay-sdk/chain-utils'
import { createWalletClient, decodeAbiParameters, encodeFunctionData, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const input = JSON.parse(process.argv[2])
const delegateAbi = JSON.parse(readFileSync(input.delegateAbiPath, 'utf8')).abi

createClient({
  baseApiUrl: input.baseApiUrl,
  // executeGaslessBatch insists on a key, but sends it only to the original service's hosts.
  apiKey: input.apiKey,
  source: 'crossfill-e2e',
  pollingInterval: 200,
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

// The SDK's executor interface, for the devnet BatchDelegate.
const executor = {
  address: input.delegate,
  originGasOverhead: 60_000,
  eip712Types: {
    Call: [
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'data', type: 'bytes' },
    ],
    Batch: [
      { name: 'calls', type: 'Call[]' },
      { name: 'nonce', type: 'uint256' },
    ],
  },
  eip712PrimaryType: 'Batch',
  buildSignDomain: (chainId, verifyingContract) => ({
    name: 'CrossfillBatchDelegate',
    version: '1',
    chainId: BigInt(chainId),
    verifyingContract,
  }),
  buildSignMessage: (calls, nonce) => ({
    calls: calls.map((call) => ({ to: call.to, value: call.value, data: call.data })),
    nonce,
  }),
  encodeExecute: (message, wrappedSignature) => {
    const [signature] = decodeAbiParameters([{ type: 'bytes' }, { type: 'bytes' }], wrappedSignature)
    return encodeFunctionData({
      abi: delegateAbi,
      functionName: 'execute',
      args: [message.calls, message.nonce, signature],
    })
  },
  getNonce: async () => BigInt(Date.now()),
}

const quote = await getClient().actions.getQuote(
  {
    chainId: input.originChainId,
    toChainId: input.destinationChainId,
    currency: input.originCurrency,
    toCurrency: input.destinationCurrency,
    amount: input.amount,
    tradeType: 'EXACT_INPUT',
    wallet,
  },
  true,
)

const progress = []
const result = await getClient().actions.executeGaslessBatch({
  quote,
  walletClient: wallet,
  executor,
  subsidizeFees: false,
  onProgress: ({ status }) => {
    if (progress.at(-1) !== status) progress.push(status)
  },
})
console.log(
  JSON.stringify({
    requestId: result.requestId,
    quotedRequestId: quote.steps.at(-1).requestId,
    quotedOutput: quote.details.currencyOut.amount,
    progress,
  }),
)
