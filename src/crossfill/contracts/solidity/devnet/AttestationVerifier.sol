// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

/// @notice Devnet check of a request attestation (GET /requests/{requestId}/signature): the
/// contract recomputes the signed hash and recovers who signed it, as an integrator's
/// contract would before trusting a transfer.
contract AttestationVerifier {
    error BadSignatureLength();
    error HighS();

    uint256 private constant HALF_ORDER =
        0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    /// @notice keccak256 of the ABI encoding of the seven attested values.
    function attestationHash(
        bytes32 requestId,
        uint256 originChainId,
        bytes32 originUser,
        bytes32 originCurrency,
        uint256 originAmount,
        uint256 destinationChainId,
        bytes32 destinationUser
    ) public pure returns (bytes32) {
        return keccak256(
            abi.encode(
                requestId,
                originChainId,
                originUser,
                originCurrency,
                originAmount,
                destinationChainId,
                destinationUser
            )
        );
    }

    /// @notice The address whose EIP-191 personal signature over the hash is `signature`.
    function signerOf(
        bytes32 requestId,
        uint256 originChainId,
        bytes32 originUser,
        bytes32 originCurrency,
        uint256 originAmount,
        uint256 destinationChainId,
        bytes32 destinationUser,
        bytes calldata signature
    ) external pure returns (address) {
        bytes32 hash = attestationHash(
            requestId,
            originChainId,
            originUser,
            originCurrency,
            originAmount,
            destinationChainId,
            destinationUser
        );
        bytes32 digest = keccak256(abi.encodePacked("\x19Ethereum Signed Message:\n32", hash));
        if (signature.length != 65) revert BadSignatureLength();
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (uint256(s) > HALF_ORDER) revert HighS();
        return ecrecover(digest, v, r, s);
    }
}
