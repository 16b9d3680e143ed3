// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

/// @notice EIP-712 signatures as our contracts check them: the calling contract's domain, the
/// digest a signer signs, and who signed it.
library TypedSignatures {
    bytes32 private constant DOMAIN_TYPEHASH = keccak256(
        "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
    );
    // Upper bound of s for canonical (non-malleable) secp256k1 signatures.
    uint256 private constant HALF_CURVE_ORDER =
        0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    /// @notice The domain separator of the calling contract (`address(this)`) on this chain.
    function domainSeparator(bytes32 nameHash, bytes32 versionHash) internal view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, nameHash, versionHash, block.chainid, address(this)));
    }

    /// @notice What a signer signs: the struct's hash under the domain.
    function digest(bytes32 domain, bytes32 structHash) internal pure returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", domain, structHash));
    }

    /// @notice Who signed `signedDigest` (65 bytes: r, s, v); address(0) for a malformed or
    /// malleable signature (s in the upper half of the curve order, or v neither 27 nor 28).
    function recover(bytes32 signedDigest, bytes calldata signature) internal pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_CURVE_ORDER || (v != 27 && v != 28)) return address(0);
        return ecrecover(signedDigest, v, r, s);
    }
}
