// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {TypedSignatures} from "../lib/TypedSignatures.sol";

/// @notice Devnet EIP-7702 delegate: an account that points its code here runs batches of
/// calls its own key signed (EIP-712), whoever sends them, so a sponsor can pay the gas of a
/// user holding no ether. Each batch nonce runs once; the account itself may run a batch
/// without a signature.
/// @dev Code runs in the delegating account: `address(this)` is the account, and the used
/// nonces live in its storage.
contract BatchDelegate {
    struct Call {
        address to;
        uint256 value;
        bytes data;
    }

    error NonceAlreadyUsed(uint256 nonce);
    error InvalidSignature();
    error CallFailed(uint256 index, bytes returnData);

    event BatchExecuted(uint256 indexed nonce, uint256 calls);

    bytes32 private constant CALL_TYPEHASH = keccak256("Call(address to,uint256 value,bytes data)");
    bytes32 private constant BATCH_TYPEHASH =
        keccak256("Batch(Call[] calls,uint256 nonce)Call(address to,uint256 value,bytes data)");
    bytes32 private constant NAME_HASH = keccak256("CrossfillBatchDelegate");
    bytes32 private constant VERSION_HASH = keccak256("1");

    mapping(uint256 => bool) public nonceUsed;

    /// @notice Run `calls` in order as this account, once per `nonce`, if the account's own
    /// key signed them (any sender), or if the account itself sends them (no signature).
    function execute(Call[] calldata calls, uint256 nonce, bytes calldata signature) external payable {
        if (nonceUsed[nonce]) revert NonceAlreadyUsed(nonce);
        if (msg.sender != address(this)) {
            bytes32 digest = TypedSignatures.digest(domainSeparator(), hashBatch(calls, nonce));
            if (TypedSignatures.recover(digest, signature) != address(this)) revert InvalidSignature();
        }
        nonceUsed[nonce] = true;
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory returned) = calls[i].to.call{value: calls[i].value}(calls[i].data);
            if (!ok) revert CallFailed(i, returned);
        }
        emit BatchExecuted(nonce, calls.length);
    }

    function domainSeparator() public view returns (bytes32) {
        return TypedSignatures.domainSeparator(NAME_HASH, VERSION_HASH);
    }

    /// @notice EIP-712 hashStruct of a batch (what the account's key signs).
    function hashBatch(Call[] calldata calls, uint256 nonce) public pure returns (bytes32) {
        bytes32[] memory callHashes = new bytes32[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            callHashes[i] = keccak256(abi.encode(CALL_TYPEHASH, calls[i].to, calls[i].value, keccak256(calls[i].data)));
        }
        return keccak256(abi.encode(BATCH_TYPEHASH, keccak256(abi.encodePacked(callHashes)), nonce));
    }
}
