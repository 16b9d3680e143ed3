// Claims a wallet's app fees with the official TypeScript SDK, as an integrator's app would:
// getAppFees for the balances, then claimAppFees with a viem private-key wallet, which signs
// the claim step and polls its check until the payout is mined.
// Input: one JSON argument {baseApiUrl, privateKey, chainId, currency}. Output: one JSON line
// on stdout with the balances before, the claim's step states and the balances after.
import { createClient, getClient, LogLevel } from '@relayprotocol/relay-sdk'
import { configureDynamicChains } from '@relayprotocol/relay-sdk/chain-utils'
import { createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const input = JSON.parse(process.argv[2])

createClient({
  baseApiUrl: input.baseApiUrl,
  source: 'crossfill-e2e',
  pollingInterval: 200,
  logLevel: LogLevel.None,
})

const chains = await configureDynamicChains()
const chain = chains.find((candidate) => candidate.id === input.chainId)
if (!chain) throw new Error(`chain ${input.chainId} missing from /chains`)

const account = privateKeyToAccount(input.privateKey)
const wallet = createWalletClient({ account, chain: chain.viemChain, transport: http(chain.httpRpcUrl) })

const before = await getClient().actions.getAppFees({ wallet: account.address })
const claimed = await getClient().actions.claimAppFees({
  wallet,
  chainId: input.chainId,
  currency: input.currency,
})
const after = await getClient().actions.getAppFees({ wallet: account.address })

const steps = claimed.data.steps.map((step) => ({
  id: step.id,
  kind: step.kind,
  requestId: step.requestId,
  items: step.items.map((item) => ({
    status: item.status,
    checkStatus: item.checkStatus,
    txHashes: item.txHashes ?? [],
  })),
}))
console.log(JSON.stringify({ before, steps, after }))
