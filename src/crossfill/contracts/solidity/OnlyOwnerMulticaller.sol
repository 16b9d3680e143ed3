// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {Call3Value, Calls, Result} from "./lib/Calls.sol";
import {Owned} from "./lib/Owned.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @title OnlyOwnerMulticaller
/// @notice A batching account for the operator (the solver): calls run from this contract's
/// address, so approvals granted to it cannot be used by anyone else.
contract OnlyOwnerMulticaller is Owned {
    constructor(address initialOwner) Owned(initialOwner) {}

    function multicall(Call3Value[] calldata calls, address refundTo)
        external
        payable
        onlyOwner
        returns (Result[] memory results)
    {
        results = Calls.executeWithValue(calls);
        if (refundTo != address(0) && address(this).balance > 0) {
            SafeTransfer.sendNative(refundTo, address(this).balance);
        }
    }

    receive() external payable {}
}
