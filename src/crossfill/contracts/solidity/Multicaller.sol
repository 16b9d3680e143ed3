// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {Call3, Call3Value, Calls, Result} from "./lib/Calls.sol";

/// @title Multicaller
/// @notice Stateless batching with Multicall3's `aggregate3`/`aggregate3Value` interface, so
/// clients such as viem can use it as their multicall3 contract.
contract Multicaller {
    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory) {
        return Calls.execute(calls);
    }

    function aggregate3Value(Call3Value[] calldata calls) external payable returns (Result[] memory) {
        uint256 required = Calls.totalValue(calls);
        if (msg.value != required) revert Calls.ValueMismatch(msg.value, required);
        return Calls.executeWithValue(calls);
    }

    function getBlockNumber() external view returns (uint256) {
        return block.number;
    }

    function getCurrentBlockTimestamp() external view returns (uint256) {
        return block.timestamp;
    }

    function getChainId() external view returns (uint256) {
        return block.chainid;
    }

    function getEthBalance(address account) external view returns (uint256) {
        return account.balance;
    }
}
