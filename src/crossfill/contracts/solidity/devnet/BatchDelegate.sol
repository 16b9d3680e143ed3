// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

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

    bytes32 private constant DOMAIN_TYPEHASH = keccak256(
        "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
    );
    bytes32 private constant CALL_TYPEHASH = keccak256("Call(address to,uint256 value,bytes data)");
    bytes32 private constant BATCH_TYPEHASH =
        keccak256("Batch(Call[] calls,uint256 nonce)Call(address to,uint256 value,bytes data)");
    bytes32 private constant NAME_HASH = keccak256("CrossfillBatchDelegate");
    bytes32 private constant VERSION_HASH = keccak256("1");
    uint256 private constant HALF_CURVE_ORDER =
        0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    mapping(uint256 => bool) public nonceUsed;

    /// @notice Run `calls` in order as this account, once per `nonce`, if the account's own
    /// key signed them (any sender), or if the account itself sends them (no signature).
    function execute(Call[] calldata calls, uint256 nonce, bytes calldata signature) external payable {
        if (nonceUsed[nonce]) revert NonceAlreadyUsed(nonce);
        if (msg.sender != address(this)) {
            bytes32 digest = keccak256(abi.encodePacked("\x19\x01", domainSeparator(), hashBatch(calls, nonce)));
            if (_recover(digest, signature) != address(this)) revert InvalidSignature();
        }
        nonceUsed[nonce] = true;
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory returned) = calls[i].to.call{value: calls[i].value}(calls[i].data);
            if (!ok) revert CallFailed(i, returned);
        }
        emit BatchExecuted(nonce, calls.length);
    }

    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// @notice EIP-712 hashStruct of a batch (what the account's key signs).
    function hashBatch(Call[] calldata calls, uint256 nonce) public pure returns (bytes32) {
        bytes32[] memory callHashes = new bytes32[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            callHashes[i] = keccak256(abi.encode(CALL_TYPEHASH, calls[i].to, calls[i].value, keccak256(calls[i].data)));
        }
        return keccak256(abi.encode(BATCH_TYPEHASH, keccak256(abi.encodePacked(callHashes)), nonce));
    }

    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_CURVE_ORDER || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }
}
