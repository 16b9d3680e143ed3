// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {Owned} from "../lib/Owned.sol";
import {ERC20} from "./ERC20.sol";
import {ReceiveWithAuthorization} from "./ReceiveWithAuthorization.sol";

/// @notice Devnet stand-in for USDC: 6 decimals, minted by its owner, and EIP-3009's
/// `receiveWithAuthorization` (gasless deposits).
contract TestUSDC is ReceiveWithAuthorization, Owned {
    constructor(address initialOwner) ERC20("USD Coin", "USDC", 6) Owned(initialOwner) {}

    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
