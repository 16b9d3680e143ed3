// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {Call3Value, Calls} from "./lib/Calls.sol";
import {Owned} from "./lib/Owned.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";
import {Router} from "./Router.sol";

/// @title Filler
/// @notice The solver's only way to fill an order: pays each recipient from the solver's own
/// inventory (ether sent with the call, tokens pulled from the solver), optionally runs calls
/// through the Router, and marks the order filled so a second fill of it reverts on-chain.
contract Filler is Owned {
    struct Payment {
        address recipient;
        address currency; // address(0) = native
        uint256 amount;
    }

    event OrderFilled(bytes32 indexed orderId, address indexed solver);
    event SolverChanged(address solver);

    error NotSolver(address caller);
    error AlreadyFilled(bytes32 orderId);
    error NativeValueMismatch(uint256 sent, uint256 required);

    address public solver;
    address payable public immutable router;
    mapping(bytes32 => bool) public filled;

    constructor(address initialOwner, address initialSolver, address payable router_)
        Owned(initialOwner)
    {
        solver = initialSolver;
        router = router_;
        emit SolverChanged(initialSolver);
    }

    function setSolver(address newSolver) external onlyOwner {
        solver = newSolver;
        emit SolverChanged(newSolver);
    }

    /// @dev Fill transactions append the orderId to this call's calldata for attribution; the ABI
    /// decoder ignores the suffix.
    function fill(bytes32 orderId, Payment[] calldata payments, Call3Value[] calldata calls)
        external
        payable
    {
        if (msg.sender != solver) revert NotSolver(msg.sender);
        if (filled[orderId]) revert AlreadyFilled(orderId);
        filled[orderId] = true;

        uint256 nativePaid = _pay(payments);
        uint256 callValue = Calls.totalValue(calls);
        if (msg.value != nativePaid + callValue) {
            revert NativeValueMismatch(msg.value, nativePaid + callValue);
        }
        if (calls.length > 0) {
            Router(router).multicall{value: callValue}(calls, msg.sender, msg.sender, abi.encode(orderId));
        }
        emit OrderFilled(orderId, msg.sender);
    }

    function _pay(Payment[] calldata payments) private returns (uint256 nativePaid) {
        for (uint256 i = 0; i < payments.length; i++) {
            Payment calldata payment = payments[i];
            if (payment.currency == address(0)) {
                nativePaid += payment.amount;
                SafeTransfer.sendNative(payment.recipient, payment.amount);
            } else {
                SafeTransfer.safeTransferFrom(payment.currency, msg.sender, payment.recipient, payment.amount);
            }
        }
    }
}
