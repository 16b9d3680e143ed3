// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {SafeTransfer} from "../lib/SafeTransfer.sol";
import {IDestinationSettler} from "./ERC7683.sol";

/// @title CrossfillDestinationSettler
/// @notice ERC-7683 destination settler for orders opened with `CrossfillOriginSettler`. A fill
/// pays the output its `originData` names (`abi.encode(outputToken, outputAmount, recipient,
/// destinationChainId, fillDeadline)`; token address 0 is native, sent as the call's value;
/// an ERC-20 is pulled from the caller) to its recipient, on its chain, before its fill
/// deadline, once: the guard is the order id together with the hash of its origin data, so a
/// fill made up with other data under a real order's id pays only what its caller gave and
/// never blocks the order's own fill.
contract CrossfillDestinationSettler is IDestinationSettler {
    event OrderFilled(
        bytes32 indexed orderId,
        address indexed filler,
        address token,
        uint256 amount,
        address recipient,
        bytes32 originDataHash
    );

    error WrongChain(uint256 destinationChainId);
    error FillDeadlinePassed(uint32 fillDeadline);
    error AlreadyFilled(bytes32 orderId);
    error NativeValueMismatch(uint256 sent, uint256 required);

    /// @notice keccak256(abi.encode(orderId, keccak256(originData))) of every fill made.
    mapping(bytes32 => bool) public filled;

    function fill(bytes32 orderId, bytes calldata originData, bytes calldata /* fillerData */ )
        external
        payable
    {
        (address token, uint256 amount, address recipient, uint256 chainId, uint32 fillDeadline) =
            abi.decode(originData, (address, uint256, address, uint256, uint32));
        if (chainId != block.chainid) revert WrongChain(chainId);
        if (block.timestamp > fillDeadline) revert FillDeadlinePassed(fillDeadline);
        bytes32 originDataHash = keccak256(originData);
        bytes32 key = fillKey(orderId, originDataHash);
        if (filled[key]) revert AlreadyFilled(orderId);
        filled[key] = true;
        uint256 required = token == address(0) ? amount : 0;
        if (msg.value != required) revert NativeValueMismatch(msg.value, required);
        if (token == address(0)) {
            SafeTransfer.sendNative(recipient, amount);
        } else {
            SafeTransfer.safeTransferFrom(token, msg.sender, recipient, amount);
        }
        emit OrderFilled(orderId, msg.sender, token, amount, recipient, originDataHash);
    }

    function fillKey(bytes32 orderId, bytes32 originDataHash) public pure returns (bytes32) {
        return keccak256(abi.encode(orderId, originDataHash));
    }
}
