// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

/// @notice Token and ether transfers that treat "no return data" as success (USDT-style tokens)
/// and refuse to talk to addresses without code.
library SafeTransfer {
    error TokenTransferFailed(address token);
    error NativeTransferFailed(address to);

    function safeTransfer(address token, address to, uint256 amount) internal {
        _callToken(token, abi.encodeWithSelector(0xa9059cbb, to, amount));
    }

    function safeTransferFrom(address token, address from, address to, uint256 amount) internal {
        _callToken(token, abi.encodeWithSelector(0x23b872dd, from, to, amount));
    }

    function safeApprove(address token, address spender, uint256 amount) internal {
        _callToken(token, abi.encodeWithSelector(0x095ea7b3, spender, amount));
    }

    function sendNative(address to, uint256 amount) internal {
        (bool ok, ) = to.call{value: amount}("");
        if (!ok) revert NativeTransferFailed(to);
    }

    function _callToken(address token, bytes memory payload) private {
        if (token.code.length == 0) revert TokenTransferFailed(token);
        (bool ok, bytes memory returned) = token.call(payload);
        if (!ok || (returned.length != 0 && !abi.decode(returned, (bool)))) {
            revert TokenTransferFailed(token);
        }
    }
}
