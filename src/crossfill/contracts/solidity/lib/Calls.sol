// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

/// @notice One call of a batch: Multicall3's `Call3Value` layout, shared by every batching contract.
struct Call3Value {
    address target;
    bool allowFailure;
    uint256 value;
    bytes callData;
}

/// @notice Multicall3's `Call3` layout (no value).
struct Call3 {
    address target;
    bool allowFailure;
    bytes callData;
}

/// @notice Outcome of one call of a batch.
struct Result {
    bool success;
    bytes returnData;
}

/// @notice Executes batches of calls; a failing call that does not allow failure reverts the
/// whole batch with the callee's own revert data, so callers see the real reason.
library Calls {
    error ValueMismatch(uint256 sent, uint256 required);

    function executeWithValue(Call3Value[] calldata calls) internal returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            Call3Value calldata call = calls[i];
            (bool ok, bytes memory returned) = call.target.call{value: call.value}(call.callData);
            if (!ok && !call.allowFailure) bubble(returned);
            results[i] = Result(ok, returned);
        }
    }

    function execute(Call3[] calldata calls) internal returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            Call3 calldata call = calls[i];
            (bool ok, bytes memory returned) = call.target.call(call.callData);
            if (!ok && !call.allowFailure) bubble(returned);
            results[i] = Result(ok, returned);
        }
    }

    function totalValue(Call3Value[] calldata calls) internal pure returns (uint256 total) {
        for (uint256 i = 0; i < calls.length; i++) total += calls[i].value;
    }

    function bubble(bytes memory revertData) internal pure {
        assembly ("memory-safe") {
            revert(add(revertData, 32), mload(revertData))
        }
    }
}
