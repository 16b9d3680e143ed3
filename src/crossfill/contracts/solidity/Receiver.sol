// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {Call3Value, Calls, Result} from "./lib/Calls.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";

/// @title Receiver
/// @notice Forwards ether sent to it straight to the solver, logging the calldata it came with
/// (the order id of a transfer-style deposit). The solver can run calls to recover anything else
/// sent here.
contract Receiver {
    event FundsForwardedWithData(bytes data);

    error NotSolver(address caller);

    address payable public immutable solver;

    constructor(address payable solver_) {
        solver = solver_;
    }

    function forward(bytes calldata data) external payable {
        _forward(data);
    }

    function makeCalls(Call3Value[] calldata calls) external payable returns (Result[] memory) {
        if (msg.sender != solver) revert NotSolver(msg.sender);
        return Calls.executeWithValue(calls);
    }

    receive() external payable {
        _forward("");
    }

    fallback() external payable {
        _forward(msg.data);
    }

    function _forward(bytes memory data) private {
        SafeTransfer.sendNative(solver, msg.value);
        emit FundsForwardedWithData(data);
    }
}
