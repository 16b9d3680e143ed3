// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {Call3Value, Result} from "./lib/Calls.sol";
import {Owned} from "./lib/Owned.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";
import {Router} from "./Router.sol";

/// @title ApprovalProxy
/// @notice The one contract users approve: it pulls the listed tokens from the caller into the
/// Router and runs the caller's batch there, atomically.
contract ApprovalProxy is Owned {
    error ArrayLengthsMismatch();

    event RouterChanged(address router);

    address payable public router;

    constructor(address initialOwner, address payable initialRouter) Owned(initialOwner) {
        router = initialRouter;
        emit RouterChanged(initialRouter);
    }

    function setRouter(address payable newRouter) external onlyOwner {
        router = newRouter;
        emit RouterChanged(newRouter);
    }

    function transferAndMulticall(
        address[] calldata tokens,
        uint256[] calldata amounts,
        Call3Value[] calldata calls,
        address refundTo,
        address nftRecipient,
        bytes calldata metadata
    ) external payable returns (Result[] memory) {
        if (tokens.length != amounts.length) revert ArrayLengthsMismatch();
        for (uint256 i = 0; i < tokens.length; i++) {
            SafeTransfer.safeTransferFrom(tokens[i], msg.sender, router, amounts[i]);
        }
        return Router(router).multicall{value: msg.value}(calls, refundTo, nftRecipient, metadata);
    }
}
