// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {IERC20} from "./lib/IERC20.sol";
import {Call3Value, Calls, Result} from "./lib/Calls.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @title Router
/// @notice Runs a batch of calls with the value sent, then returns leftover ether to `refundTo`.
/// It holds no approvals of anyone: tokens reach it only for the duration of one batch (through
/// the ApprovalProxy or a solver's fill), so arbitrary calls from it are safe.
contract Router {
    event Multicall(address indexed sender, bytes metadata);

    function multicall(
        Call3Value[] calldata calls,
        address refundTo,
        address nftRecipient,
        bytes calldata metadata
    ) external payable returns (Result[] memory results) {
        nftRecipient; // kept for interface compatibility; this router does not hold NFTs
        results = Calls.executeWithValue(calls);
        if (refundTo != address(0) && address(this).balance > 0) {
            SafeTransfer.sendNative(refundTo, address(this).balance);
        }
        emit Multicall(msg.sender, metadata);
    }

    /// @notice Sweeps leftover token balances to the given recipients (0 amount = whole balance).
    function cleanupErc20s(address[] calldata tokens, address[] calldata recipients) external {
        for (uint256 i = 0; i < tokens.length; i++) {
            uint256 balance = IERC20(tokens[i]).balanceOf(address(this));
            if (balance > 0) SafeTransfer.safeTransfer(tokens[i], recipients[i], balance);
        }
    }

    /// @notice Sweeps leftover ether (0 = whole balance).
    function cleanupNative(uint256 amount, address recipient) external {
        SafeTransfer.sendNative(recipient, amount == 0 ? address(this).balance : amount);
    }

    receive() external payable {}
}
