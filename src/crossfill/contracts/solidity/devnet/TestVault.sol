// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {SafeTransfer} from "../lib/SafeTransfer.sol";

/// @notice Devnet destination for cross-chain calls: takes deposits on behalf of an account.
contract TestVault {
    error ZeroAccount();

    event Deposited(address indexed account, address indexed token, uint256 amount);

    // account => token (address(0) = ether) => amount
    mapping(address => mapping(address => uint256)) public balances;

    function deposit(address onBehalfOf) external payable {
        if (onBehalfOf == address(0)) revert ZeroAccount();
        balances[onBehalfOf][address(0)] += msg.value;
        emit Deposited(onBehalfOf, address(0), msg.value);
    }

    function depositToken(address token, uint256 amount, address onBehalfOf) external {
        if (onBehalfOf == address(0)) revert ZeroAccount();
        SafeTransfer.safeTransferFrom(token, msg.sender, address(this), amount);
        balances[onBehalfOf][token] += amount;
        emit Deposited(onBehalfOf, token, amount);
    }
}
